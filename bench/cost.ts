/**
 * `ocpool cost` on a big database (`npm run bench:cost [-- --messages N --roots R --rounds K --regen]`,
 * not part of CI). US-3: a 1M-message database reports in ≤ 2× the time of one `SELECT … GROUP BY`
 * over the same rows with the sqlite3 CLI.
 *
 * Generates, once, an opencode database from opencode 1.18.33's real schema with N message rows
 * (default 1,000,000) over 30 days: R root sessions (default N / 250) on paid models, each with three
 * pooled children (`explore-1`, `implement-2`, `context-1`) on free or cheap models; a quarter of the
 * rows are user messages, the rest assistant messages shaped as opencode writes them (tokens, cache,
 * cost, model, agent, path, time). Cached under `.bench-cache/` (git-ignored) for a day. Then, in
 * rounds, alternating, each from a cold process:
 *  - the reference: `sqlite3 DB "SELECT json_extract(data,'$.agent'), count(*), sum(…tokens…), sum(…cost)
 *    FROM message WHERE json_extract(data,'$.role') = 'assistant' GROUP BY 1"`, the process's wall time;
 *  - the report: the built CLI, `node bin/ocpool.js cost --db DB --since all --json`, the process's wall
 *    time (start-up, price catalogs and all).
 * Both read every row (`--since all`). It prints the medians, the ratio report/reference (target ≤ 2;
 * exit 1 above it), and for information the same SELECT run in-process by better-sqlite3 (the SQLite
 * the CLI links, which may be newer than the sqlite3 CLI's). The last line is the result as JSON.
 */
import Database from "better-sqlite3"
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, rmSync, statSync } from "node:fs"
import { join } from "node:path"
import { arg, cachedDatabase, CLI, idMaker, median, ROOT, rng, SCHEMA, type GeneratedMeta } from "./common.js"

const MESSAGES = arg("messages", 1_000_000)
const ROOTS = arg("roots", Math.max(10, Math.round(MESSAGES / 250)))
const ROUNDS = arg("rounds", 5)
/** Bumped whenever the generator changes, so an old cache is not reused. */
const GENERATOR_VERSION = 2
const SPAN_DAYS = 30
const CACHE_MAX_AGE_MS = 24 * 3_600_000
const TARGET_RATIO = 2

const DAY = 86_400_000

/** The reference: one GROUP BY over every assistant message, the sums the report needs. */
export const REFERENCE_SQL = `SELECT json_extract(data,'$.agent') AS agent, count(*),
  sum(json_extract(data,'$.tokens.input')), sum(json_extract(data,'$.tokens.output')), sum(json_extract(data,'$.tokens.reasoning')),
  sum(json_extract(data,'$.tokens.cache.read')), sum(json_extract(data,'$.tokens.cache.write')), sum(json_extract(data,'$.cost'))
FROM message WHERE json_extract(data,'$.role') = 'assistant' GROUP BY 1`

const ROOT_MODELS = [
  ["anthropic", "claude-sonnet-4-5"],
  ["openai", "gpt-5"],
  ["anthropic", "claude-opus-4-5"]
] as const
const CHILD_MODELS = [
  ["opencode", "big-pickle"],
  ["opencode", "gpt-5-nano"],
  ["openrouter", "qwen/qwen3-coder"]
] as const
const CHILD_AGENTS = ["explore-1", "implement-2", "context-1"] as const

interface CacheMeta extends GeneratedMeta {
  readonly messages: number
  readonly roots: number
  readonly assistant: number
}

const generate = (path: string): CacheMeta => {
  const t0 = Date.now()
  const random = rng(20_261_202)
  const int = (n: number) => Math.floor(random() * n)
  const id = idMaker(random)
  rmSync(path, { force: true })
  const db = new Database(path)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = OFF")
  db.exec(SCHEMA)
  db.prepare("INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('global', '/', 0, 0, '[]')").run()
  const start = t0 - SPAN_DAYS * DAY
  const insertSession = db.prepare(
    `INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'global', ?, ?, ?, ?, '1.18.33', ?, ?)`
  )
  // every tree: a root and its three pooled children, created at the tree's start
  const trees: Array<{ root: string; children: ReadonlyArray<string>; rootModel: number; childModel: number }> = []
  db.transaction(() => {
    for (let t = 0; t < ROOTS; t++) {
      const at = start + Math.floor((t / ROOTS) * SPAN_DAYS * DAY)
      const root = id("ses", at, true)
      insertSession.run(root, null, `slug-${t}`, `/home/dev/app-${t % 7}`, `Bench root ${t}`, at, at)
      const children = CHILD_AGENTS.map((agent, k) => {
        const c = id("ses", at + k + 1, true)
        insertSession.run(c, root, `slug-${t}-${k}`, `/home/dev/app-${t % 7}`, `${agent} work (@${agent} subagent)`, at + k + 1, at + k + 1)
        return c
      })
      trees.push({ root, children, rootModel: t % ROOT_MODELS.length, childModel: t % CHILD_MODELS.length })
    }
  })()
  const insertMessage = db.prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)")
  let assistant = 0
  const BATCH = 50_000
  for (let from = 0; from < MESSAGES; from += BATCH) {
    db.transaction(() => {
      for (let i = from; i < Math.min(MESSAGES, from + BATCH); i++) {
        // messages in time order; each belongs to a tree near its time (trees overlap for a while)
        const at = start + Math.floor((i / MESSAGES) * SPAN_DAYS * DAY)
        const t = Math.min(ROOTS - 1, Math.max(0, Math.floor((i / MESSAGES) * ROOTS) - int(3)))
        const tree = trees[t]!
        const inRoot = random() < 0.4
        const k = int(3)
        const session = inRoot ? tree.root : tree.children[k]!
        const agent = inRoot ? "build" : CHILD_AGENTS[k]!
        const [providerID, modelID] = inRoot ? ROOT_MODELS[tree.rootModel]! : CHILD_MODELS[tree.childModel]!
        let data: string
        if (random() < 0.25) {
          data = JSON.stringify({ role: "user", time: { created: at }, agent, model: { providerID, modelID }, summary: { diffs: [] } })
        } else {
          assistant++
          const input = 200 + int(30_000)
          const output = 20 + int(3000)
          const reasoning = random() < 0.3 ? int(2000) : 0
          const read = random() < 0.6 ? int(40_000) : 0
          const write = random() < 0.2 ? int(8000) : 0
          const cost = inRoot ? (input * 3 + (output + reasoning) * 15 + read * 0.3 + write * 3.75) / 1e6 : tree.childModel === 1 ? (input * 0.05 + (output + reasoning) * 0.4 + read * 0.005) / 1e6 : 0
          data = JSON.stringify({
            role: "assistant",
            mode: agent,
            agent,
            path: { cwd: `/home/dev/app-${t % 7}`, root: `/home/dev/app-${t % 7}` },
            cost,
            tokens: { total: input + output + reasoning + read + write, input, output, reasoning, cache: { write, read } },
            modelID,
            providerID,
            time: { created: at, completed: at + 1000 + int(60_000) },
            finish: random() < 0.7 ? "tool-calls" : "stop",
            parentID: id("msg", at - 1)
          })
        }
        insertMessage.run(id("msg", at), session, at, at, data)
      }
    })()
    process.stderr.write(`\rgenerating: ${Math.min(MESSAGES, from + BATCH).toLocaleString("en-US")} / ${MESSAGES.toLocaleString("en-US")} messages`)
  }
  process.stderr.write("\n")
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.close()
  return { version: GENERATOR_VERSION, messages: MESSAGES, roots: ROOTS, assistant, generatedAt: t0, bytes: statSync(path).size, generateMs: Date.now() - t0 }
}

/** Wall time of a process, in ms, and its stdout; a failure ends the bench. */
const timed = (command: string, args: ReadonlyArray<string>): { readonly ms: number; readonly stdout: string } => {
  const t = process.hrtime.bigint()
  const r = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 << 20, env: { ...process.env, OPENCODE_MODELS_PATH: "" } })
  const ms = Number(process.hrtime.bigint() - t) / 1e6
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${r.status}: ${r.stderr}`)
  return { ms, stdout: r.stdout }
}

const main = () => {
  if (!existsSync(join(ROOT, "dist/cli.js"))) execFileSync(process.execPath, [join(ROOT, "scripts/build.mjs")], { cwd: ROOT })
  const sqliteCli = spawnSync("sqlite3", ["--version"], { encoding: "utf8" })
  if (sqliteCli.status !== 0) throw new Error("the sqlite3 CLI is needed (Debian: apt-get install sqlite3)")
  const cache = cachedDatabase(`cost-v${GENERATOR_VERSION}-${MESSAGES}m-${ROOTS}r`, GENERATOR_VERSION, CACHE_MAX_AGE_MS, generate)
  const db = cache.path
  // warm the page cache for both: one untimed run of each
  timed("sqlite3", [db, REFERENCE_SQL])
  const check = JSON.parse(timed(process.execPath, [CLI, "cost", "--db", db, "--since", "all", "--json"]).stdout) as { total: { calls: number }; unreadableRows: number }
  if (check.total.calls !== cache.meta.assistant) throw new Error(`the report counted ${check.total.calls} assistant messages, the generator wrote ${cache.meta.assistant}`)
  if (check.unreadableRows !== 0) throw new Error(`the report found ${check.unreadableRows} unreadable rows in the generated database, which has none`)
  const reference: Array<number> = []
  const report: Array<number> = []
  for (let r = 0; r < ROUNDS; r++) {
    reference.push(timed("sqlite3", [db, REFERENCE_SQL]).ms)
    report.push(timed(process.execPath, [CLI, "cost", "--db", db, "--since", "all", "--json"]).ms)
  }
  // for information: the same SELECT in-process on the SQLite the CLI links
  const conn = new Database(db, { readonly: true })
  const inProcess: Array<number> = []
  for (let r = 0; r < ROUNDS; r++) {
    const t = process.hrtime.bigint()
    conn.prepare(REFERENCE_SQL).all()
    inProcess.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  const linked = (conn.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v
  conn.close()
  const ratio = median(report) / median(reference)
  const round = (x: number) => Math.round(x)
  const result = {
    messages: MESSAGES,
    assistant: cache.meta.assistant,
    roots: ROOTS,
    sessions: ROOTS * 4,
    bytes: cache.meta.bytes,
    rounds: ROUNDS,
    sqlite3Cli: sqliteCli.stdout.split(" ")[0],
    sqliteLinked: linked,
    node: process.version,
    referenceMs: reference.map(round),
    reportMs: report.map(round),
    inProcessSelectMs: inProcess.map(round),
    ratio: Math.round(ratio * 100) / 100,
    target: TARGET_RATIO,
    pass: ratio <= TARGET_RATIO
  }
  const n = (x: number) => x.toLocaleString("en-US")
  console.log(
    `cost bench: ${n(MESSAGES)} messages (${n(cache.meta.assistant)} assistant), ${n(ROOTS)} roots x 3 pooled children, ${(cache.meta.bytes / 1e6).toFixed(0)} MB (${cache.fresh ? `generated in ${(cache.meta.generateMs / 1000).toFixed(0)} s` : "cached"}), ${ROUNDS} rounds, node ${process.version}`
  )
  console.log(`  reference: sqlite3 ${result.sqlite3Cli} CLI, one SELECT ... GROUP BY agent over every assistant message: median ${round(median(reference))} ms (${result.referenceMs.join(", ")})`)
  console.log(`  report:    node bin/ocpool.js cost --since all --json (whole process): median ${round(median(report))} ms (${result.reportMs.join(", ")})`)
  console.log(`  for information, the same SELECT in-process on SQLite ${linked}: median ${round(median(inProcess))} ms (${result.inProcessSelectMs.join(", ")})`)
  console.log(`ratio report/reference: ${ratio.toFixed(2)} (target <= ${TARGET_RATIO})  ${result.pass ? "PASS" : "FAIL"}`)
  console.log(JSON.stringify(result))
  if (!result.pass) process.exitCode = 1
}

main()
