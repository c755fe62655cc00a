/**
 * The context map (issue 23, US-20..US-22) inside the real opencode 1.18.33 (offline, fake provider),
 * on one server with a stand-in desktop (python-dbusmock, as notify.e2e.test.ts):
 * - US-20: an edit in a root session, then its idle, starts one refresh run: a root session titled
 *   `context (auto bootstrap)` prompted as a pool variant `context-<n>` on that slot's model; the fake
 *   answers it as the maintainer (two `write` calls into the map); the map is all it wrote, the log says
 *   it updated the map and its claim is released. A second idle within 10 minutes starts nothing. A run
 *   that fails puts its paths back: the next run (queued with `ocpool context refresh`) lists them.
 *   The refresh raises no notification, while a root session's done does.
 * - US-21: `build` writing the map, and the context agent writing `manager.md`, are denied by opencode,
 *   outside a git repository (edit patterns relative to /) and, on a second server, inside one.
 * - US-22: `/context-update src/net` runs the context agent as a subtask with `Focus: src/net`.
 * The first server's tests build on each other in order (one 10-minute spacing window: the bootstrap run,
 * the skipped idle, the failed run and the queued one); the notification test reads the whole file's desktop.
 * Run alone: `npm run build && npx vitest run --config vitest.e2e.config.ts test/e2e/contextMap.e2e.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFile, execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { promisify } from "node:util"
import { contextQueuedIn, contextRecordIn } from "../support/stateDb.js"
import { shown, startDbusMock, type DbusMock } from "../real/dbus.js"
import { fakeConfig, sleep, textOf, type FakeLlm, type MessageWithParts, type OpencodeHandle, type PluginEntry, type SessionInfo } from "./harness.js"
import { e2eWorld } from "./world.js"

const ROOT = new URL("../../", import.meta.url).pathname
const CLI = join(ROOT, "dist/cli.js")
const SLOTS = ["fakeB/pool-b", "fakeB/pool-c"]
const PLUGIN_ENTRY: PluginEntry = [join(ROOT, "dist/opencode-plugin.js"), { models: { slots: SLOTS.map((model) => ({ model, weight: 1 })) } }]
const TURN_MS = 60_000
/** opencode's message when an agent's permission rules deny a tool call (1.18.33). */
const DENIED = "The user has specified a rule which prevents you from using this specific tool call"
const BOOTSTRAP = "context (auto bootstrap)"
const UPDATE = "context (auto update)"
const DONE = "Finished — waiting for your review"

const world = e2eWorld(120)
let fake: FakeLlm
let oc: OpencodeHandle
let mock: DbusMock | undefined
let traceDir = ""
/** The project root as the plugin keys it: the real path of the project directory. */
let root = ""
/** The root session of the first scenario, whose done must reach the desktop. */
let firstRoot = ""

beforeAll(async () => {
  fake = world.fake
  mock = await startDbusMock()
  traceDir = mkdtempSync(join(tmpdir(), "ocpool-e2e-ctx-trace-"))
  oc = await world.start({
    configJson: fakeConfig({ fakeUrl: fake.url }),
    pluginPaths: [PLUGIN_ENTRY],
    env: { ...mock.env, OCPOOL_LOG_LEVEL: "debug", OCPOOL_TRACE: join(traceDir, "pool-%p.jsonl") }
  })
  root = realpathSync(oc.projectDir)
}, 240_000)

afterAll(async () => {
  if (process.env.E2E_DEBUG === "1" && oc !== undefined) {
    console.log(`--- context map lines\n${contextLog().join("\n")}`)
    console.log(`--- trace (context, spawn, release)\n${trace().filter((l) => /^(context|spawn|release|bind|end)/.test(String(l["type"]))).map((l) => JSON.stringify(l)).join("\n")}`)
    console.log(`--- fake requests\n${(await fake.requests()).map((r) => `#${r.seq} ${r.provider}/${r.model} ${r.behavior} (${r.why}) ${JSON.stringify(r.lastUserText.slice(0, 80))}`).join("\n")}`)
  }
  await mock?.stop()
  if (traceDir !== "") rmSync(traceDir, { recursive: true, force: true })
}, 30_000)

const until = async (cond: () => boolean | Promise<boolean>, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await cond()) return true
    await sleep(100)
  }
  return cond()
}

/** The plugin's `context map: …` lines in opencode's log. */
const contextLog = (): Array<string> =>
  oc
    .readLog()
    .split("\n")
    .flatMap((l) => {
      const m = /message="(context map: [^"]*)"/.exec(l)
      return m === null ? [] : [m[1]!.replace(/\\"/g, '"')]
    })

/** The trace's lines (`pool-<pid>.jsonl`), or with `decisions` the machine's decisions beside it. */
const trace = (decisions = false): Array<Record<string, any>> => {
  const file = join(traceDir, `pool-${oc.pid}.jsonl${decisions ? ".decisions.jsonl" : ""}`)
  if (!existsSync(file)) return []
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, any>)
}

const ocpool = async (args: ReadonlyArray<string>): Promise<string> =>
  (await promisify(execFile)(process.execPath, [CLI, ...args, "--state-dir", oc.stateDir], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })).stdout

/** The refresh machine's record in the state dir (context.<key>.json). */
const record = (): Record<string, any> => contextRecordIn(oc.stateDir, root) as unknown as Record<string, any>

const sessions = async (): Promise<ReadonlyArray<SessionInfo>> => {
  const r = await oc.request<ReadonlyArray<SessionInfo>>("GET", "/session")
  if (r.status !== 200 || !Array.isArray(r.body)) throw new Error(`GET /session -> ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`)
  return r.body
}
const createdAt = (s: SessionInfo): number => Number((s["time"] as { created?: number } | undefined)?.created ?? 0)
const refreshSessions = async (): Promise<Array<SessionInfo>> =>
  (await sessions()).filter((s) => s.title === BOOTSTRAP || s.title === UPDATE).sort((a, b) => createdAt(a) - createdAt(b))

/** Every file under the project directory (relative paths), the seeded `.opencode/node_modules` left out. */
const projectFiles = (): Array<string> => {
  const out: Array<string> = []
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name)
      const rel = relative(oc.projectDir, full)
      if (rel === ".opencode/node_modules") continue
      if (statSync(full).isDirectory()) walk(full)
      else out.push(rel)
    }
  }
  walk(oc.projectDir)
  return out.sort()
}

const userText = (messages: ReadonlyArray<MessageWithParts>): string => textOf(messages.find((m) => m.info.role === "user"))
const toolParts = (messages: ReadonlyArray<MessageWithParts>, tool: string) =>
  messages.flatMap((m) => m.parts).filter((p) => p.type === "tool" && p["tool"] === tool)

/** The slot model of a pool variant `<base>-<n>`. */
const slotModel = (agent: string): string | undefined => {
  const m = /^context-(\d+)$/.exec(agent)
  return m === null ? undefined : SLOTS[Number(m[1]) - 1]
}

/** Waits for a `context map: <run> …` outcome line of a run not in `seen`; returns the line and the run. */
const nextOutcome = async (seen: ReadonlySet<string>, ms: number): Promise<{ readonly line: string; readonly run: string }> => {
  let hit: { line: string; run: string } | undefined
  await until(() => {
    for (const line of contextLog()) {
      const m = /^context map: (ctx-\S+) (updated the map|ended without changing|failed)/.exec(line)
      if (m !== null && !seen.has(m[1]!)) {
        hit = { line, run: m[1]! }
        return true
      }
    }
    return false
  }, ms)
  if (hit === undefined) throw new Error(`no run ended within ${ms} ms; context map lines:\n${contextLog().join("\n")}`)
  return hit
}
const endedRuns = new Set<string>()

/** A root session that says one thing and idles. */
const rootTurn = async (title: string, text: string): Promise<string> => {
  const s = (await oc.createSession({ title })).id
  const mark = await oc.prompt(s, text)
  await oc.waitIdle(s, mark, TURN_MS)
  return s
}

describe("the context map in the real opencode 1.18.33", () => {
  it("US-20 an edit in a root session, then its idle, starts one bootstrap run: a `context (auto bootstrap)` root session prompted as context-<n> on that slot's model with the edited path; it writes only the map, the log says it updated the map and its claim is released", async () => {
    expect(existsSync(join(root, ".opencode/context"))).toBe(false)
    firstRoot = await rootTurn("US-20 edits a file", "add a file [[fake:write:src/a.ts]]")
    expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe("written by the fake model\n")
    const before = projectFiles()

    const outcome = await nextOutcome(endedRuns, TURN_MS)
    endedRuns.add(outcome.run)
    expect(outcome.line).toBe(`context map: ${outcome.run} updated the map`)

    const runs = await refreshSessions()
    expect(runs.map((s) => s.title)).toEqual([BOOTSTRAP])
    const run = runs[0]!
    expect(run.parentID).toBeUndefined()
    const messages = await oc.messages(run.id)
    const user = messages.find((m) => m.info.role === "user")!
    const agent = String(user.info["agent"])
    expect(agent).toMatch(/^context-[12]$/)
    const model = slotModel(agent)!
    expect(user.info["model"]).toEqual({ providerID: model.split("/")[0], modelID: model.split("/")[1] })
    const assistants = messages.filter((m) => m.info.role === "assistant")
    expect(assistants.length).toBeGreaterThan(0)
    for (const a of assistants) expect(`${a.info["providerID"]}/${a.info["modelID"]}|${a.info["agent"] ?? a.info["mode"]}`).toBe(`${model}|${agent}`)

    const prompt = userText(messages)
    expect(prompt.startsWith(`Create the context map of the project at ${root}: `)).toBe(true)
    expect(prompt.split("\n")).toContain("- src/a.ts")
    expect(prompt.endsWith("Answer with one line per map file you changed and why.")).toBe(true)
    // the fake answered the run as the maintainer: both writes completed
    const writes = toolParts(messages, "write")
    expect(writes.map((p) => [p["state"]?.status, p["state"]?.input?.filePath])).toEqual([
      ["completed", `${root}/.opencode/context/architecture.md`],
      ["completed", `${root}/.opencode/context/decisions.md`]
    ])
    const requests = (await fake.requests()).filter((r) => r.why === "refresh-prompt")
    expect(requests.map((r) => `${r.provider}/${r.model}`)).toEqual([model])

    // nothing but the map is new in the project
    const added = projectFiles().filter((f) => !before.includes(f))
    expect(added).toEqual([".opencode/context/architecture.md", ".opencode/context/decisions.md"])

    // the run's claim: routed as a `context` spawn, released; no claim is left
    const lines = trace()
    const claim = `context-map:${outcome.run}`
    expect(lines.some((l) => l["type"] === "spawn" && l["claim"] === claim && l["base"] === "context")).toBe(true)
    expect(await until(async () => (JSON.parse(await ocpool(["status", "--json"])) as { claims: number }).claims === 0, 10_000)).toBe(true)
    const rec = record()
    expect(rec["root"]).toBe(root)
    expect(rec["inFlight"]).toBeNull()
    expect(rec["lastRun"]).toMatchObject({ run: outcome.run, kind: "bootstrap", outcome: "ok", paths: 1 })
    expect(rec["pending"]).toEqual([])
  }, 120_000)

  it("US-20 a second root idle within 10 minutes starts nothing, although new edits (by `edit` and by `write`) are pending", async () => {
    expect(endedRuns.size).toBe(1)
    // opencode's edit wants the file read in the session first: a read, then the edit
    await fake.enqueue({ behavior: "read", arg: "src/a.ts", match: "change src/a.ts" }, { behavior: "edit", arg: "src/a.ts", match: "change src/a.ts" })
    const e = await rootTurn("US-20 edits a file with edit", "change src/a.ts")
    const edits = toolParts(await oc.messages(e), "edit")
    expect(edits.map((p) => p["state"]?.status)).toEqual(["completed"])
    expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe("edited by the fake model\n")
    expect(await until(() => trace().some((l) => l["type"] === "context_idle" && l["session"] === e), 10_000)).toBe(true)
    const s = await rootTurn("US-20 edits again", "another file [[fake:write:src/b.ts]]")
    expect(readFileSync(join(root, "src/b.ts"), "utf8")).toBe("written by the fake model\n")
    // the plugin saw the edit and the idle (its trace), and started no `context` spawn after them
    expect(await until(() => trace().some((l) => l["type"] === "context_idle" && l["session"] === s), 10_000)).toBe(true)
    expect(trace().some((l) => l["type"] === "context_edit" && l["session"] === s && l["paths"]?.[0] === "src/b.ts")).toBe(true)
    await sleep(1_500)
    const idleAt = trace().findIndex((l) => l["type"] === "context_idle" && l["session"] === e)
    expect(trace().some((l) => l["type"] === "context_edit" && l["session"] === e && l["paths"]?.[0] === "src/a.ts")).toBe(true)
    expect(trace().slice(idleAt).filter((l) => l["type"] === "spawn" && String(l["claim"]).startsWith("context-map:"))).toEqual([])
    // the machine decided so because of the spacing: the next run may start 10 minutes after the first began
    const started = trace(true).filter((d) => d["type"] === "context_start")
    expect(started.map((d) => d["run"])).toEqual([...endedRuns])
    const skips = trace(true).filter((d) => d["type"] === "context_skip")
    expect(skips.map((d) => [d["reason"], d["pending"], d["until"]])).toEqual([
      ["spacing", 1, started[0]!["at"] + 600_000],
      ["spacing", 2, started[0]!["at"] + 600_000]
    ])
    expect((await refreshSessions()).map((s) => s.title)).toEqual([BOOTSTRAP])
    expect(record()["pending"]).toEqual(["src/a.ts", "src/b.ts"])
    expect(record()["inFlight"]).toBeNull()
  }, 120_000)

  it("US-20 a run that fails puts its paths back: the next run, queued with `ocpool context refresh`, lists them in its prompt", async () => {
    // the next refresh request fails with a 400 opencode does not retry (an `error` answer typed
    // `server_error` would be retried by opencode, and the run would then succeed)
    await fake.enqueue({ behavior: "limit-400", message: "fake refresh failure", match: "the context map of the project at " })
    expect(await ocpool(["context", "refresh", "--project", oc.projectDir])).toContain("refresh queued")
    await rootTurn("US-20 edits a third file", "one more [[fake:write:src/c.ts]]")
    const failed = await nextOutcome(endedRuns, TURN_MS)
    endedRuns.add(failed.run)
    expect(failed.line).toMatch(new RegExp(`^context map: ${failed.run} failed \\(.+\\); 3 paths go back in the queue$`))
    expect(record()["lastRun"]).toMatchObject({ run: failed.run, kind: "update", outcome: "failed", paths: 3 })
    expect(record()["pending"]).toEqual(["src/a.ts", "src/b.ts", "src/c.ts"])
    const failedRun = (await refreshSessions()).at(-1)!
    expect(failedRun.title).toBe(UPDATE)
    expect(userText(await oc.messages(failedRun.id)).split("\n").filter((l) => l.startsWith("- "))).toEqual(["- src/a.ts", "- src/b.ts", "- src/c.ts"])

    // within the 10 minutes, so only the queued request starts the next run
    expect(await ocpool(["context", "refresh", "--project", oc.projectDir])).toContain("refresh queued")
    await rootTurn("US-20 just talks", "say something")
    const next = await nextOutcome(endedRuns, TURN_MS)
    endedRuns.add(next.run)
    expect(next.line).toBe(`context map: ${next.run} updated the map`)
    const runs = await refreshSessions()
    expect(runs.map((s) => s.title)).toEqual([BOOTSTRAP, UPDATE, UPDATE])
    const prompt = userText(await oc.messages(runs[2]!.id))
    expect(prompt.startsWith(`Update the context map of the project at ${root} (`)).toBe(true)
    expect(prompt.split("\n").filter((l) => l.startsWith("- "))).toEqual(["- src/a.ts", "- src/b.ts", "- src/c.ts"])
    expect(record()["lastRun"]).toMatchObject({ run: next.run, outcome: "ok", paths: 3 })
    expect(record()["pending"]).toEqual([])
    expect(contextQueuedIn(oc.stateDir, root)).toBeUndefined()
  }, 120_000)

  it("US-21 opencode denies `build` a write to the map (relative and absolute path) and the context agent a write to manager.md", async () => {
    const arch = join(root, ".opencode/context/architecture.md")
    const was = readFileSync(arch, "utf8")
    for (const path of [".opencode/context/architecture.md", arch]) {
      const s = await rootTurn("US-21 build writes the map", `overwrite the map [[fake:write:${path}]]`)
      const messages = await oc.messages(s)
      const writes = toolParts(messages, "write")
      expect(writes.map((p) => p["state"]?.status)).toEqual(["error"])
      expect(String(writes[0]!["state"]?.error)).toContain(DENIED)
      if (process.env.E2E_DEBUG === "1") console.log(`build write ${path}: ${String(writes[0]!["state"]?.error)}`)
      expect(messages.filter((m) => m.info.role === "assistant").every((m) => m.info["agent"] === "build" || m.info["mode"] === "build")).toBe(true)
      expect(readFileSync(arch, "utf8")).toBe(was)
    }

    const manager = join(root, ".opencode/context/manager.md")
    await fake.enqueue({ behavior: "write", match: "Review the project map", files: [{ filePath: manager, content: "overwritten by the context agent\n" }] })
    const parent = (await oc.createSession({ title: "US-21 review" })).id
    const r = await oc.request("POST", `/session/${parent}/command`, { command: "context-review", arguments: "" }, { timeoutMs: TURN_MS })
    expect(r.status).toBe(200)
    await until(async () => (await oc.status())[parent] === undefined, TURN_MS)
    const children = await oc.children(parent)
    expect(children).toHaveLength(1)
    const child = await oc.messages(children[0]!.id)
    expect(String(child.find((m) => m.info.role === "user")?.info["agent"])).toMatch(/^context-[12]$/)
    const writes = toolParts(child, "write")
    expect(writes.map((p) => [p["state"]?.status, p["state"]?.input?.filePath])).toEqual([["error", manager]])
    expect(String(writes[0]!["state"]?.error)).toContain(DENIED)
    if (process.env.E2E_DEBUG === "1") console.log(`context write manager.md: ${String(writes[0]!["state"]?.error)}`)
    expect(existsSync(manager)).toBe(false)
  }, 120_000)

  it("US-22 `/context-update src/net` runs the context agent (a pool variant) as a subtask whose prompt says `Focus: src/net`", async () => {
    const since = (await fake.health()).requests
    const parent = (await oc.createSession({ title: "US-22 update command" })).id
    const r = await oc.request("POST", `/session/${parent}/command`, { command: "context-update", arguments: "src/net" }, { timeoutMs: TURN_MS })
    expect(r.status).toBe(200)
    await until(async () => (await oc.status())[parent] === undefined, TURN_MS)
    const child = await fake.waitForRequest((q) => q.seq > since && q.lastUserTextFull.startsWith("Refresh the project map in .opencode/context/"), 10_000)
    expect(child.lastUserTextFull.split("\n")).toContain("Focus: src/net")
    expect(child.lastUserTextFull).not.toContain("$ARGUMENTS")
    const children = await oc.children(parent)
    expect(children).toHaveLength(1)
    const messages = await oc.messages(children[0]!.id)
    const agent = String(messages.find((m) => m.info.role === "user")?.info["agent"])
    expect(agent).toMatch(/^context-[12]$/)
    expect(`${child.provider}/${child.model}`).toBe(slotModel(agent))
  }, 120_000)

  it("US-20 the refresh raises no notification, while a root session's done does", async () => {
    const desk = mock!
    await sleep(1_500)
    const notes = (await desk.notifications()).map(shown)
    if (process.env.E2E_DEBUG === "1") console.log(`--- notifications\n${notes.map((n) => `${n.summary} | ${n.body}`).join("\n")}`)
    const runs = await refreshSessions()
    expect(runs.length).toBe(3)
    for (const n of notes) for (const s of runs) expect(n.summary).not.toContain(String(s.title))
    const title = (await oc.request<{ title: string }>("GET", `/session/${firstRoot}`)).body.title
    expect(notes.filter((n) => n.summary === `opencode — ${title}` && n.body === DONE)).toHaveLength(1)
    expect(notes.filter((n) => n.body.startsWith("Failed"))).toEqual([])
  }, 60_000)
})

describe("the map's edit rules in a git repository", () => {
  it("US-21 in a git repository (opencode's edit patterns relative to the worktree, not to /) opencode still denies `build` the map and the context agent manager.md, and lets the context agent write the map", async () => {
    const o = await world.start({
      configJson: fakeConfig({ fakeUrl: fake.url }),
      pluginPaths: [PLUGIN_ENTRY],
      setup: (dirs) => {
        execFileSync("git", ["init", "-q", dirs.projectDir])
      }
    })
    const dir = realpathSync(o.projectDir)
    const s = (await o.createSession({ title: "US-21 build writes the map (git)" })).id
    const mark = await o.prompt(s, "overwrite the map [[fake:write:.opencode/context/architecture.md]]")
    await o.waitIdle(s, mark, TURN_MS)
    const denied = toolParts(await o.messages(s), "write")
    expect(denied.map((p) => p["state"]?.status)).toEqual(["error"])
    expect(String(denied[0]!["state"]?.error)).toContain(DENIED)
    expect(existsSync(join(dir, ".opencode/context/architecture.md"))).toBe(false)

    const arch = join(dir, ".opencode/context/architecture.md")
    const manager = join(dir, ".opencode/context/manager.md")
    await fake.enqueue({ behavior: "write", match: "Review the project map", files: [{ filePath: arch, content: "# Architecture (git)\n" }, { filePath: manager, content: "overwritten\n" }] })
    const parent = (await o.createSession({ title: "US-21 review (git)" })).id
    expect((await o.request("POST", `/session/${parent}/command`, { command: "context-review", arguments: "" }, { timeoutMs: TURN_MS })).status).toBe(200)
    await until(async () => (await o.status())[parent] === undefined, TURN_MS)
    const children = await o.children(parent)
    expect(children).toHaveLength(1)
    const writes = toolParts(await o.messages(children[0]!.id), "write")
    expect(writes.map((p) => [p["state"]?.input?.filePath, p["state"]?.status])).toEqual([
      [arch, "completed"],
      [manager, "error"]
    ])
    expect(String(writes[1]!["state"]?.error)).toContain(DENIED)
    expect(readFileSync(arch, "utf8")).toBe("# Architecture (git)\n")
    expect(existsSync(manager)).toBe(false)
    await o.stop()
  }, 120_000)
})
