/**
 * The timeline page in a real browser (issue 24 item 2): Debian's chromium (/usr/bin/chromium, from
 * scripts/ci-real-deps.sh) driven headless through playwright-core, no browser download. For every
 * recorded trace in test/fixtures/traces the page (built as `ocpool replay --timeline` builds it: feed
 * + the Timeline builder + timelineHtml) is loaded from a file:// URL and checked through the DOM
 * against the checked-in decisions: one `.bar` per route with its slot's lane and its outcome class,
 * the route's `--explain` sentence in the tooltip, every cooldown with its model and reason and the
 * reason in the tooltip on keyboard focus, zoom (button and keys) changing the axis, no console error,
 * no network request. Screenshots of two fixtures go to test/artifacts/ (CI artifacts, never compared).
 * Also: hostile text stays text, a large trace is aggregated until zoomed in, and the SVG loads as a
 * well-formed SVG document.
 */
import { describe, expect, it } from "@effect/vitest"
import { afterAll, beforeAll } from "vitest"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { chromium, type Browser, type Page } from "playwright-core"
import { explainDecision } from "../../src/core/trace/format.js"
import type { Decision } from "../../src/core/trace/machine.js"
import { AGGREGATE_BARS, timelineHtml } from "../../src/core/view/timelineHtml.js"
import { timelineSvg } from "../../src/core/view/timelineSvg.js"
import { BAR_OUTCOMES, type Bar, type Timeline } from "../../src/core/view/timelineModel.js"
import { replayTimeline } from "../support/timelineOf.js"

const CHROMIUM = "/usr/bin/chromium"
if (!existsSync(CHROMIUM)) throw new Error("chromium not found: install the Debian package chromium (apt-get install -y chromium)")

const root = new URL("../../", import.meta.url).pathname
const traces = join(root, "test/fixtures/traces")
const artifacts = join(root, "test/artifacts")
const SCREENSHOTS = new Set(["abort-in-flight", "context-refresh"])
const fixtures = readdirSync(traces)
  .filter((f) => f.endsWith(".jsonl") && !f.endsWith(".decisions.jsonl"))
  .map((f) => f.slice(0, -".jsonl".length))
  .sort()

/** The Timeline of a trace text, as `ocpool replay --timeline` builds it, and the replay's decisions. */
const replayed = replayTimeline
const timelineOf = (text: string, title: string): Timeline => replayed(text, title).timeline

const decisionsOf = (name: string): Array<Decision> =>
  readFileSync(join(traces, `${name}.decisions.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Decision)

let browser: Browser
const dir = mkdtempSync(join(tmpdir(), "ocpool-timeline-real-"))
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM })
})
afterAll(async () => {
  await browser?.close()
  rmSync(dir, { recursive: true, force: true })
})

interface Opened {
  readonly page: Page
  /** Console errors and uncaught page errors. */
  readonly errors: Array<string>
  /** Requests other than the page itself. */
  readonly requests: Array<string>
  readonly close: () => Promise<void>
}

/** Writes `content` to `file` in the scratch directory and opens it from its file:// URL, watching errors and requests. */
const open = async (file: string, content: string, ready = true): Promise<Opened> => {
  const path = join(dir, file)
  writeFileSync(path, content)
  const url = pathToFileURL(path).href
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } })
  const page = await context.newPage()
  const errors: Array<string> = []
  const requests: Array<string> = []
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text())
  })
  page.on("pageerror", (e) => errors.push(String(e)))
  page.on("request", (r) => {
    if (r.url() !== url) requests.push(r.url())
  })
  await page.route("**/*", (route) => {
    if (route.request().url() === url) return route.continue()
    requests.push(route.request().url())
    return route.abort()
  })
  await page.goto(url)
  if (ready) await page.waitForSelector('body[data-ready="1"]', { state: "attached", timeout: 30_000 })
  return { page, errors, requests, close: () => context.close() }
}

/** `body[data-renders]`: how many renders the page has done. */
const renders = async (page: Page): Promise<number> => Number(await page.getAttribute("body", "data-renders"))

/** The tooltip's text after `action` (hover or focus), once shown. */
const tipAfter = async (page: Page, action: () => Promise<void>): Promise<string> => {
  await action()
  await page.waitForSelector("#tip:not([hidden])", { timeout: 5_000 })
  return (await page.textContent("#tip")) ?? ""
}

describe("US-45 timeline page in chromium (test/fixtures/traces)", () => {
  for (const name of fixtures) {
    it(`US-45 ${name}: one bar per claim on its lane with its outcome, tooltips, zoom, no error, no request`, async () => {
      const { timeline, decisions: replayedDecisions } = replayed(readFileSync(join(traces, `${name}.jsonl`), "utf8"), `${name}.jsonl`)
      // the checked-in decisions (what the replay must reproduce) say which claims, lanes and cooldowns to expect
      const decisions = decisionsOf(name)
      const routes = decisions.flatMap((d) => (d.type === "route" ? [d] : []))
      const cools = decisions.flatMap((d) => (d.type === "cool" ? [d] : []))
      const { page, errors, requests, close } = await open(`${name}.html`, timelineHtml(timeline))
      try {
        expect(await page.getAttribute("body", "data-mode")).toBe("bars")

        // one bar per route decision, on the route's slot lane, with the Timeline's outcome
        const bars = await page.$$eval(".bar", (els) =>
          els.map((e) => ({ claim: e.getAttribute("data-claim"), lane: e.getAttribute("data-lane"), outcome: e.getAttribute("data-outcome"), cls: e.getAttribute("class") }))
        )
        expect(bars.map((b) => `${b.claim} ${b.lane}`).sort()).toEqual(routes.map((r) => `${r.claim} slot-${r.slot}`).sort())
        const byClaim = new Map<string, Bar>(timeline.bars.map((b) => [b.claim, b]))
        for (const b of bars) {
          expect(BAR_OUTCOMES).toContain(b.outcome)
          expect(b.outcome).toBe(byClaim.get(b.claim!)?.outcome)
          expect(b.cls!.split(" ")).toEqual(expect.arrayContaining(["bar", `outcome-${b.outcome}`]))
        }
        // a lane row and label per Timeline lane, in its order
        expect(await page.$$eval(".lane-label", (els) => els.map((e) => e.getAttribute("data-lane")))).toEqual(timeline.lanes.map((l) => l.id))

        // the tooltip of the first bar, on hover, carries its route's --explain sentence
        const first = replayedDecisions.find((d): d is Extract<Decision, { type: "route" }> => d.type === "route")!
        const firstIndex = bars.findIndex((b) => b.claim === first.claim)
        const barTip = await tipAfter(page, () => page.locator(".bar").nth(firstIndex).hover())
        expect(barTip).toContain(explainDecision(first))

        // every cooldown: its model and reason on the element, and the reason in the tooltip on focus
        const coolEls = await page.$$eval(".cool", (els) => els.map((e) => `${e.getAttribute("data-model")} ${e.getAttribute("data-reason")}`))
        expect([...new Set(coolEls)].sort()).toEqual([...new Set(cools.flatMap((c) => c.models.map((m) => `${m} ${c.reason}`)))].sort())
        const coolCount = await page.locator(".cool").count()
        for (let i = 0; i < coolCount; i++) {
          const cool = page.locator(".cool").nth(i)
          const reason = (await cool.getAttribute("data-reason"))!
          const tip = await tipAfter(page, () => cool.focus())
          expect(tip).toContain(reason)
          expect(tip).toContain((await cool.getAttribute("data-model"))!)
        }

        // zoom: the button and the keys change the axis; 0 gives the whole trace back
        const axis0 = await page.textContent("#axis")
        expect(axis0).not.toBe("")
        let n = await renders(page)
        await page.click("#zoom-in")
        expect(await renders(page)).toBe(n + 1)
        const axis1 = await page.textContent("#axis")
        expect(axis1).not.toBe(axis0)
        await page.locator("body").press("+")
        expect(await page.textContent("#axis")).not.toBe(axis1)
        await page.locator("body").press("ArrowRight")
        await page.locator("body").press("0")
        expect(await page.textContent("#axis")).toBe(axis0)
        n = await renders(page)
        await page.click("#zoom-out")
        await page.click("#zoom-reset")
        expect(await renders(page)).toBe(n + 2)
        expect(await page.textContent("#axis")).toBe(axis0)

        if (SCREENSHOTS.has(name)) {
          mkdirSync(artifacts, { recursive: true })
          await page.mouse.move(0, 0)
          await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true })
        }
        expect(errors).toEqual([])
        expect(requests).toEqual([])
      } finally {
        await close()
      }
    })
  }

  it("US-45 every element the page draws is focusable and shows its explanation; marks carry their kind", async () => {
    const name = "abort-in-flight"
    const timeline = timelineOf(readFileSync(join(traces, `${name}.jsonl`), "utf8"), `${name}.jsonl`)
    const { page, errors, requests, close } = await open("focus.html", timelineHtml(timeline))
    try {
      expect(await page.locator(".mark").count()).toBe(timeline.marks.length)
      for (const m of timeline.marks) {
        const el = page.locator(`.mark.mark-${m.kind}[data-lane="${m.lane}"]`).first()
        expect(await el.getAttribute("tabindex")).toBe("0")
        const tip = await tipAfter(page, () => el.focus())
        expect(tip).toContain(m.explain.split("\n")[0]!)
      }
      // Tab walks through the drawn elements
      await page.locator("#zoom-in").focus()
      await page.keyboard.press("Tab")
      expect(await page.evaluate("document.activeElement && document.activeElement.getAttribute('data-i')")).toMatch(/^[bcm]\d+$/)
      expect(await page.isVisible("#tip")).toBe(true)
      await page.keyboard.press("Escape")
      expect(await page.isVisible("#tip")).toBe(false)
      expect(errors).toEqual([])
      expect(requests).toEqual([])
    } finally {
      await close()
    }
  })

  it("US-45 hostile text in a trace stays text: no script runs, nothing is fetched, attributes hold it as written", async () => {
    const evil = `"><img src=http://127.0.0.1:9/x onerror=alert(1)></script><script>document.title='pwned'</script>`
    const t0 = 1_796_115_600_000
    const timeline: Timeline = {
      title: evil,
      start: t0,
      end: t0 + 10_000,
      lanes: [{ id: "slot-1", label: `1. ${evil}`, kind: "slot", slot: 1 }],
      bars: [{ claim: evil, lane: "slot-1", start: t0, end: t0 + 5_000, outcome: "limit", base: "explore", agent: "explore-1", model: evil, pass: "overflow", explain: `${evil}: routed.` }],
      cools: [{ model: evil, lanes: ["slot-1"], start: t0 + 1_000, end: t0 + 9_000, reason: evil, strike: 1, scope: "model", explain: evil }],
      marks: [{ at: t0 + 2_000, lane: "slot-1", kind: "abort", label: evil, explain: evil }],
      lines: 3,
      decisions: 3
    }
    const { page, errors, requests, close } = await open("hostile.html", timelineHtml(timeline))
    try {
      expect(await page.title()).toBe(`ocpool timeline: ${evil}`)
      expect(await page.locator("img").count()).toBe(0)
      expect(await page.getAttribute(".bar", "data-claim")).toBe(evil)
      expect(await page.getAttribute(".bar", "class")).toContain("pass-overflow")
      expect(await page.getAttribute(".cool", "data-reason")).toBe(evil)
      const tip = await tipAfter(page, () => page.locator(".bar").focus())
      expect(tip).toContain(`${evil}: routed.`)
      expect(tip).toContain("overflow pass")
      expect(errors).toEqual([])
      expect(requests).toEqual([])
    } finally {
      await close()
    }
  })

  it("US-45 a large trace is aggregated per pixel until zoomed in, then drawn bar by bar; the wheel zooms too", async () => {
    const t0 = 1_796_115_600_000
    const n = AGGREGATE_BARS * 3
    const lanes = [1, 2, 3, 4].map((s) => ({ id: `slot-${s}`, label: `${s}. m${s}`, kind: "slot" as const, slot: s }))
    const bars: Array<Bar> = Array.from({ length: n }, (_, i) => ({
      claim: `ses_parent:call_${i}`,
      lane: `slot-${(i % 4) + 1}`,
      start: t0 + i * 1_000,
      end: t0 + i * 1_000 + 30_000,
      outcome: BAR_OUTCOMES[i % BAR_OUTCOMES.length]!,
      base: "explore",
      agent: "explore-1",
      model: "m",
      pass: i % 3 === 0 ? "second" : "first",
      explain: `ses_parent:call_${i}: routed.`
    }))
    const timeline: Timeline = { title: "large", start: t0, end: t0 + n * 1_000 + 30_000, lanes, bars, cools: [], marks: [], lines: n * 3, decisions: n * 2 }
    const { page, errors, requests, close } = await open("large.html", timelineHtml(timeline))
    try {
      expect(await page.getAttribute("body", "data-mode")).toBe("agg")
      expect(await page.locator(".bar").count()).toBe(0)
      const aggs = await page.locator(".agg").count()
      expect(aggs).toBeGreaterThan(0)
      expect(aggs).toBeLessThanOrEqual(4 * 1280)
      const tip = await tipAfter(page, () => page.locator(".agg").first().focus())
      expect(tip).toMatch(/^\d+ claims on 1\. m1 between /)
      // zoomed in 8 times: 1/256 of the trace is in view, drawn bar by bar
      for (let i = 0; i < 8; i++) await page.click("#zoom-in")
      expect(await page.getAttribute("body", "data-mode")).toBe("bars")
      const shown = await page.locator(".bar").count()
      expect(shown).toBeGreaterThan(0)
      expect(shown).toBeLessThanOrEqual(AGGREGATE_BARS)
      // the wheel zooms out (scheduled on the next frame)
      const box = (await page.locator("#chart").boundingBox())!
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
      for (let i = 0; i < 12; i++) await page.mouse.wheel(0, 400)
      await page.waitForFunction("document.body.dataset.mode === 'agg'", undefined, { timeout: 10_000 })
      expect(errors).toEqual([])
      expect(requests).toEqual([])
    } finally {
      await close()
    }
  })

  it("US-45 the SVG of a fixture loads as a well-formed SVG document with a bar per claim", async () => {
    const name = "retry-429"
    const timeline = timelineOf(readFileSync(join(traces, `${name}.jsonl`), "utf8"), `${name}.jsonl`)
    const { page, errors, requests, close } = await open(`${name}.svg`, timelineSvg(timeline), false)
    try {
      expect(await page.evaluate("document.documentElement.namespaceURI")).toBe("http://www.w3.org/2000/svg")
      expect(await page.evaluate("document.getElementsByTagName('parsererror').length")).toBe(0)
      expect(await page.evaluate("document.querySelectorAll('rect.bar > title').length")).toBe(timeline.bars.length)
      expect(errors).toEqual([])
      expect(requests).toEqual([])
    } finally {
      await close()
    }
  })
})
