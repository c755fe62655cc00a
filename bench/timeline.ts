/**
 * The timeline page in a real browser (`npm run bench:timeline [-- --lines N --rounds R]`), issue 24:
 * a 100,000-line trace must render in under 3 s.
 *
 * Generates a spawn trace of N lines (default 100,000; bench/traceGen.ts), replays it into the Timeline
 * (core/view/timeline.ts), writes the page (core/view/timelineHtml.ts) and loads it from a file:// URL in
 * Debian's chromium, headless through playwright-core, until `body[data-ready]`. In the same run and in
 * alternating rounds, each in a fresh browser context, it loads two references: the page of a
 * 1,000-line trace and a trivial page. It prints the median wall time (goto to ready), the page's own
 * time to ready (`data-ready-ms`, from the navigation's start), the bound and the ratios. It never fails
 * on the figures.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { chromium, type Browser } from "playwright-core"
import { feed, startReplay } from "../src/core/trace/replay.js"
import { timelineBuilder } from "../src/core/view/timeline.js"
import { timelineHtml } from "../src/core/view/timelineHtml.js"
import type { Timeline } from "../src/core/view/timelineModel.js"
import { arg, median } from "./common.js"
import { generate } from "./traceGen.js"

const LINES = arg("lines", 100_000)
const ROUNDS = arg("rounds", 5)
const REFERENCE_LINES = 1_000
const BOUND_MS = 3_000
const CHROMIUM = "/usr/bin/chromium"

/** The trace's Timeline, as `ocpool replay --timeline` builds it. */
const timelineOf = (lines: ReadonlyArray<string>, title: string): Timeline => {
  const b = timelineBuilder(title)
  let cursor = startReplay()
  for (const line of lines) {
    const r = feed(cursor, line)
    if (r._tag !== "Ok") throw new Error(r.message)
    cursor = r.cursor
    b.add(r.input, r.decisions)
  }
  return b.finish()
}

interface Load {
  /** Wall time from `goto` to `body[data-ready]` (or the load of the trivial page). */
  readonly wallMs: number
  /** The page's own time to ready, from its navigation's start. */
  readonly readyMs: number
  readonly mode: string
}

const load = async (browser: Browser, url: string, trivial: boolean): Promise<Load> => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } })
  const page = await context.newPage()
  const errors: Array<string> = []
  page.on("pageerror", (e) => errors.push(String(e)))
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text())
  })
  const t0 = performance.now()
  await page.goto(url, { waitUntil: trivial ? "load" : "commit" })
  if (!trivial) await page.waitForSelector("body[data-ready]", { state: "attached", timeout: 60_000 })
  const wallMs = performance.now() - t0
  const body = (await page.evaluate("[document.body.dataset.readyMs || String(Math.round(performance.now())), document.body.dataset.mode || '-']")) as [string, string]
  await context.close()
  if (errors.length > 0) console.log(`  page errors: ${errors.join(" | ")}`)
  return { wallMs, readyMs: Number(body[0]), mode: body[1] }
}

const main = async (): Promise<void> => {
  if (!statSync(CHROMIUM, { throwIfNoEntry: false })) {
    console.log("chromium not found: install the Debian package chromium (apt-get install -y chromium)")
    process.exitCode = 1
    return
  }
  const dir = mkdtempSync(join(tmpdir(), "ocpool-bench-timeline-"))
  try {
    const t0 = performance.now()
    const big = timelineOf(generate(LINES), `bench-${LINES}.jsonl`)
    const buildMs = performance.now() - t0
    const t1 = performance.now()
    const bigHtml = timelineHtml(big)
    const htmlMs = performance.now() - t1
    const small = timelineOf(generate(REFERENCE_LINES), `bench-${REFERENCE_LINES}.jsonl`)
    const files = {
      big: join(dir, "big.html"),
      small: join(dir, "small.html"),
      trivial: join(dir, "trivial.html")
    }
    writeFileSync(files.big, bigHtml)
    writeFileSync(files.small, timelineHtml(small))
    writeFileSync(files.trivial, "<!doctype html><html><head><meta charset=utf-8><title>t</title></head><body>t</body></html>")
    const url = (f: string): string => pathToFileURL(f).href

    const browser = await chromium.launch({ executablePath: CHROMIUM })
    const version = browser.version()
    const runs = { big: [] as Array<Load>, small: [] as Array<Load>, trivial: [] as Array<Load> }
    try {
      await load(browser, url(files.small), false) // warm-up
      for (let i = 0; i < ROUNDS; i++) {
        runs.trivial.push(await load(browser, url(files.trivial), true))
        runs.small.push(await load(browser, url(files.small), false))
        runs.big.push(await load(browser, url(files.big), false))
      }
    } finally {
      await browser.close()
    }
    const wall = (xs: ReadonlyArray<Load>): number => median(xs.map((x) => x.wallMs))
    const ready = (xs: ReadonlyArray<Load>): number => median(xs.map((x) => x.readyMs))
    const ms = (x: number): string => `${x.toFixed(0)} ms`
    const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`
    console.log(
      `timeline bench: ${LINES.toLocaleString("en-US")} trace lines -> ${big.bars.length.toLocaleString("en-US")} bars, ${big.cools.length.toLocaleString("en-US")} cools, ${big.marks.length.toLocaleString("en-US")} marks, ${big.lanes.length} lanes; page ${mb(Buffer.byteLength(bigHtml))}; ${ROUNDS} rounds; chromium ${version} headless, node ${process.version}`
    )
    console.log(`build (replay + Timeline): ${ms(buildMs)}; timelineHtml: ${ms(htmlMs)}`)
    console.log(`${LINES.toLocaleString("en-US")}-line page, goto -> body[data-ready]: ${ms(wall(runs.big))} (rounds ${runs.big.map((r) => r.wallMs.toFixed(0)).join(", ")}); page's own time to ready ${ms(ready(runs.big))}; first view ${runs.big[0]?.mode ?? "-"}`)
    console.log(`bound: < ${ms(BOUND_MS)}: ${wall(runs.big) < BOUND_MS ? "within" : "OVER"} (${(wall(runs.big) / BOUND_MS).toFixed(2)} of the bound)`)
    console.log(`reference, ${REFERENCE_LINES.toLocaleString("en-US")}-line page: ${ms(wall(runs.small))} (own ${ms(ready(runs.small))}); ratio ${(wall(runs.big) / wall(runs.small)).toFixed(2)}`)
    console.log(`reference, trivial page (goto -> load): ${ms(wall(runs.trivial))}; ratio ${(wall(runs.big) / wall(runs.trivial)).toFixed(2)}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
