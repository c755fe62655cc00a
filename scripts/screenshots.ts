/**
 * `npx tsx scripts/screenshots.ts`: the pictures in docs/OPERATIONS.md ("Seeing the pool"). Not part
 * of the build or the tests; needs Xvfb, xterm and ImageMagick's `import` (apt-get install -y xvfb
 * xterm imagemagick xfonts-base) and Debian's chromium.
 *
 * 1. docs/img/live-view.png: the real `ocpool top` in a real xterm on a virtual display, over a state
 *    directory this script fills through the shared-state port (its own claims held while it runs,
 *    cooldowns, a quota record, a heavy-work permit held and one queued, a root session on a fallback)
 *    and a recorded decisions file for "last decisions".
 * 2. docs/img/timeline.png: a timeline page in chromium: the one named on the command line (the demo
 *    prints the path of its own: `npx tsx scripts/screenshots.ts /tmp/ocpool-demo-timeline-<pid>.html`),
 *    else `ocpool replay --timeline` of a trace named there, else of test/fixtures/traces/limit-mid.jsonl.
 */
import { Effect, Layer } from "effect"
import { execFileSync, spawnSync } from "node:child_process"
import { chmodSync, copyFileSync, mkdtempSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { chromium } from "playwright-core"
import { sharedStateLayer } from "../src/layers/state/sharedStateLayer.js"
import { startTimeOf } from "../src/layers/state/proc.js"
import { SharedState } from "../src/services/state/SharedState.js"
import { StateDir } from "../src/services/state/StateDir.js"
import { makeClaim } from "../test/helpers.js"

const root = new URL("../", import.meta.url).pathname
const cli = join(root, "bin/ocpool.js")
const tmp = mkdtempSync(join(tmpdir(), "ocpool-shots-"))
const dir = join(tmp, "state")
execFileSync("mkdir", ["-m", "700", dir])
const pool = join(tmp, "pool.txt")
writeFileSync(pool, "openrouter/qwen/qwen3-coder:free 2\nopencode/grok-code 2\ngroq/llama-3.3-70b-versatile 1\ngoogle/gemini-2.5-flash 1\n")

const now = Date.now()
const claim = (key: string, model: string, base: string, ageS: number) => ({ ...makeClaim(key, model, base, now - ageS * 1000), slot: 1, targetSession: `ses_${key}` })
const port = sharedStateLayer({ backend: "sqlite", lockWaitMs: 1_000 }).pipe(
  Layer.provide(Layer.succeed(StateDir, { dir, trusted: true, pid: process.pid, host: hostname(), startTime: startTimeOf(process.pid) }))
)
await Effect.runPromise(
  Effect.scoped(
    Effect.flatMap(SharedState, (s) =>
      s.commit(now, {
        claims: {
          claims: [
            claim("call_a1", "openrouter/qwen/qwen3-coder:free", "explore", 95),
            claim("call_a2", "openrouter/qwen/qwen3-coder:free", "explore", 41),
            claim("call_b1", "opencode/grok-code", "implement", 230),
            claim("call_b2", "opencode/grok-code", "explore", 12),
            claim("call_b3", "opencode/grok-code", "explore", 3)
          ],
          reaped: 1
        },
        cool: [
          { model: "groq/llama-3.3-70b-versatile", reason: "rate_limit", strikes: 2, scope: "model", since: now - 20_000, until: now + 250_000, source: "stated" },
          { model: "google/gemini-2.5-flash", reason: "quota", strikes: 1, scope: "model", since: now - 60_000, until: now + 3_300_000, source: "stated" }
        ],
        uncool: [],
        quota: [
          { model: "openrouter/qwen/qwen3-coder:free", requests: { remaining: 14, limit: 50, resetAt: now + 1_500_000 }, seenAt: now - 4_000 },
          { model: "opencode/grok-code", requests: { remaining: 180, limit: 200, resetAt: now + 40_000 }, tokens: { remaining: 61_000, limit: 100_000, resetAt: now + 40_000 }, seenAt: now - 9_000 }
        ],
        fallbacks: [{ session: "ses_root_7f3", original: "anthropic/claude-sonnet-4-5", active: "opencode/grok-code", until: now + 1_800_000, at: now - 120_000 }],
        permits: {
          put: [
            { id: "p-1", token: "t1", budget: "heavy", weight: 1, reason: "npm test", holder: { host: hostname(), pid: process.pid, startToken: startTimeOf(process.pid), via: "run" }, seq: 1, requestedAt: now - 70_000, grantedAt: now - 65_000 },
            { id: "p-2", token: "t2", budget: "heavy", weight: 1, reason: "cargo build --release", holder: { host: hostname(), pid: process.pid, startToken: startTimeOf(process.pid), via: "plugin" }, seq: 2, requestedAt: now - 30_000 }
          ],
          remove: []
        }
      })
    ).pipe(Effect.provide(port))
  )
)
// the last decisions: a recorded trace's decisions file
const trace = join(tmp, "pool.jsonl")
copyFileSync(join(root, "test/fixtures/traces/limit-mid.decisions.jsonl"), `${trace}.decisions.jsonl`)

const live = join(root, "docs/img/live-view.png")
const shot = spawnSync(
  "xvfb-run",
  [
    "-a",
    "-s",
    "-screen 0 806x516x24",
    "sh",
    "-c",
    `xterm -geometry 100x30+0+0 -fa 'DejaVu Sans Mono' -fs 10 -bg '#1e1e1e' -fg '#d4d4d4' -e env OCPOOL_STATE_DIR= XDG_CONFIG_HOME=${tmp} ${process.execPath} ${cli} top --state-dir ${dir} --pool ${pool} --trace ${trace} & sleep 4; import -window root -crop 806x516+0+0 ${live}; kill %1`
  ],
  { stdio: "inherit", timeout: 60_000 }
)
console.log(`live view: ${live} (exit ${shot.status})`)

// the timeline: of a page given (`npm run demo` prints the path of its own), else of a fixture
const given = process.argv[2]
const html = given?.endsWith(".html") ? given : join(tmp, "timeline.html")
if (html !== given) execFileSync(process.execPath, [cli, "replay", given ?? join(root, "test/fixtures/traces/limit-mid.jsonl"), "--timeline", html], { stdio: ["ignore", "ignore", "inherit"] })
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] })
const page = await browser.newPage({ viewport: { width: 1200, height: 460 } })
await page.goto(`file://${html}`)
await page.waitForSelector("body[data-ready]")
const timeline = join(root, "docs/img/timeline.png")
await page.screenshot({ path: timeline })
await browser.close()
console.log(`timeline: ${timeline}`)
