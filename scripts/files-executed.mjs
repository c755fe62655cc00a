#!/usr/bin/env node
// Counts the source files whose code runs between a hook's entry and the moment its row is written
// (issue 34): one `task` spawn up to its `claims` row, one 429 up to its `cooldowns` row, after a
// warm-up. Every file of src/ is transpiled on its own (esbuild, no bundling) into a temporary
// directory, so V8's precise coverage names source files; a file counts when any of its functions
// ran, the module's own top level aside. The rows are caught where the SQLite driver runs them.
// Usage: node scripts/files-executed.mjs [--functions]
import { build } from "esbuild"
import inspector from "node:inspector"
import { mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { pathToFileURL } from "node:url"

const ROOT = new URL("..", import.meta.url).pathname
const showFunctions = process.argv.includes("--functions")
const sources = (dir) => readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? sources(join(dir, n)) : n.endsWith(".ts") && !n.endsWith(".d.ts") ? [join(dir, n)] : []))
const out = mkdtempSync(join(tmpdir(), "ocpool-files-"))
await build({ entryPoints: sources(join(ROOT, "src")), outdir: join(out, "src"), outbase: join(ROOT, "src"), format: "esm", platform: "node", logLevel: "warning" })
// the transpiled files resolve their packages from the checkout's node_modules
symlinkSync(join(ROOT, "node_modules"), join(out, "node_modules"))

// the rows: a statement inserting into `claims` or `cooldowns` tells the count before it runs
const require = createRequire(join(ROOT, "package.json"))
const Database = require("better-sqlite3")
const prepare = Database.prototype.prepare
Database.prototype.prepare = function (sql) {
  const stmt = prepare.call(this, sql)
  const table = /^\s*INSERT INTO (claims|cooldowns)\b/.exec(sql)?.[1]
  if (table === undefined) return stmt
  const run = stmt.run
  stmt.run = function (...args) {
    globalThis.__onWrite?.(table)
    return run.apply(this, args)
  }
  return stmt
}

const at = (p) => import(pathToFileURL(join(out, "src", p)).href)
const { parseSettings } = await at("core/options.js")
const { AbortClientMemory } = await at("layers/opencode/AbortClientMemory.js")
const { NotifierNone } = await at("layers/notify/NotifierNone.js")
const { AppLogMemory } = await at("layers/opencode/AppLogMemory.js")
const { makeHooks } = await at("plugin/hooks.js")
const { liveLayer } = await at("plugin/live.js")

const session = new inspector.Session()
session.connect()
const post = (method, params) => {
  let result
  session.post(method, params ?? {}, (e, v) => {
    if (e) throw e
    result = v
  })
  return result
}
post("Profiler.enable")
post("Profiler.startPreciseCoverage", { callCount: true, detailed: false })
const srcRoot = join(out, "src")
const executed = () => {
  const files = []
  for (const script of post("Profiler.takePreciseCoverage").result) {
    if (!script.url.startsWith("file://") || !script.url.includes("/src/") || !script.url.startsWith(pathToFileURL(srcRoot).href)) continue
    const ran = script.functions.filter((f) => f.ranges[0].count > 0 && f.ranges[0].startOffset > 0).map((f) => f.functionName || "(anonymous)")
    if (ran.length > 0) files.push(relative(srcRoot, new URL(script.url).pathname).replace(/\.js$/, ".ts") + (showFunctions ? `  [${[...new Set(ran)].join(", ")}]` : ""))
  }
  return files.sort()
}

const dir = mkdtempSync(join(tmpdir(), "ocpool-files-state-"))
const logs = []
const { settings } = parseSettings({ stateDir: join(dir, "state"), models: "zen/a\nzen/b" }, {})
const layer = liveLayer({ client: undefined, directory: dir }, settings, { log: AppLogMemory(logs), abort: AbortClientMemory(["ok"], []), notifier: NotifierNone("counting") })
const hooks = await makeHooks(layer, { settings, warnings: [] })
const spawn = (call) => hooks["tool.execute.before"]({ tool: "task", sessionID: "p", callID: call }, { args: { subagent_type: "explore" } })
const release = (call) => hooks["tool.execute.after"]({ tool: "task", sessionID: "p", callID: call, args: {} }, { title: "", output: "", metadata: {} })
const event = (type, properties) => hooks.event({ event: { type, properties } })
for (let i = 0; i < 3; i++) {
  await spawn(`w${i}`)
  await release(`w${i}`)
}
const measure = async (table, act) => {
  let seen
  globalThis.__onWrite = (t) => {
    if (t === table && seen === undefined) seen = executed()
  }
  executed()
  await act()
  globalThis.__onWrite = undefined
  return seen
}
const spawnFiles = await measure("claims", () => spawn("c1"))
await event("session.created", { sessionID: "s1", info: { id: "s1", parentID: "p", agent: "explore-1", title: "x (@explore-1 subagent)" } })
await new Promise((r) => setTimeout(r, 50))
const limitFiles = await measure("cooldowns", async () => {
  await event("session.error", { sessionID: "s1", error: { name: "APIError", data: { statusCode: 429, message: "Slow down" } } })
  await new Promise((r) => setTimeout(r, 700))
})
const show = (what, files) => console.log(files === undefined ? `${what}: the row was never written` : `${what}: ${files.length} files\n  ${files.join("\n  ")}`)
show("spawn -> claims row", spawnFiles)
show("429 -> cooldown row", limitFiles)
await hooks.dispose()
rmSync(dir, { recursive: true, force: true })
rmSync(out, { recursive: true, force: true })
process.exit(spawnFiles === undefined || limitFiles === undefined ? 1 : 0)
