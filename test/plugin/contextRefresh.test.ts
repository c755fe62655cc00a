/**
 * The context map's automatic refresh through the plugin's hooks (issue 23, US-20): edits from the
 * edit/write/patch tools, a root session's idle, the run's session created on a pool slot and prompted
 * as the routed variant, its end, the record in the state directory, the CLI's refresh marker, and a
 * restart. Real state files in temp dirs; a recording prompter and notifier.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { effectOf } from "../../src/core/engine/effects.js"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { contextQueuedIn, contextRecordIn, seedContextQueued } from "../support/stateDb.js"
import { SessionPromptMemory, type PromptCall } from "../../src/layers/opencode/SessionPromptMemory.js"
import { bootsPerTest, event, POOL2, settle, tmp, type Booted } from "./boot.js"

const { start } = bootsPerTest()
const ROOT = "ses_root"

interface Run {
  readonly b: Booted
  readonly prompts: Array<PromptCall>
  readonly created: Array<string>
  readonly project: string
}

const boot = async (options: Record<string, unknown> = {}, from?: { project: string; stateDir: string }, createFails?: string): Promise<Run> => {
  const prompts: Array<PromptCall> = []
  const created: Array<string> = []
  const project = from?.project ?? tmp("ocpool-project-")
  const b = await start({ models: POOL2, ...options, ...(from === undefined ? {} : { stateDir: from.stateDir }) }, ["ok"], {}, 0, undefined, ["ok"], {
    prompt: SessionPromptMemory(prompts, { created, ...(createFails === undefined ? {} : { createFails }) }),
    project
  })
  return { b, prompts, created, project }
}

const edit = (r: Run, session: string, tool: string, args: Record<string, unknown>) =>
  r.b.hooks["tool.execute.after"]!({ tool, sessionID: session, callID: `call_${Math.random()}`, args } as never, { title: "", output: "", metadata: {} } as never)

const busy = (r: Run, session: string) => event(r.b, "session.status", { sessionID: session, status: { type: "busy" } })
const idle = (r: Run, session: string) => event(r.b, "session.idle", { sessionID: session })
const turn = async (r: Run, session: string) => {
  await busy(r, session)
  await idle(r, session)
  await settle(r.b)
}
const claims = async (r: Run) => (await Effect.runPromise(r.b.hooks.engine.state)).machine.claims
const record = (r: Run) => contextRecordIn(r.b.stateDir, r.project)!

describe("the context map's automatic refresh in the plugin (issue 23)", () => {
  it("US-20 criterion 1: an edit to src/a.ts and no map dir, then the root idles: one `context (auto bootstrap)` session on a claimed slot, its prompt with the root and the path", async () => {
    const r = await boot()
    await edit(r, ROOT, "edit", { filePath: join(r.project, "src/a.ts"), oldString: "a", newString: "b" })
    await turn(r, ROOT)
    expect(r.created).toEqual(["context (auto bootstrap)"])
    expect(r.prompts).toHaveLength(1)
    const p = r.prompts[0]!
    expect(p.session).toBe("ses_created_1")
    expect(p.agent).toMatch(/^context-[12]$/)
    expect(`${p.model.providerID}/${p.model.modelID}`).toBe(p.agent === "context-1" ? "zen/alpha" : "go/gamma")
    expect(p.text).toContain(r.project)
    expect(p.text).toContain("- src/a.ts")
    const held = await claims(r)
    expect(held).toEqual([expect.objectContaining({ base: "context", targetSession: "ses_created_1" })])
    expect(r.b.logs.map((l) => l.message)).toContainEqual(expect.stringMatching(/^routed context -> context-\d/))
  })

  it("US-20 criterion 2: with the map dir present the session is `context (auto update)`; write and apply_patch tools are collected too", async () => {
    const r = await boot()
    mkdirSync(join(r.project, ".opencode/context"), { recursive: true })
    writeFileSync(join(r.project, ".opencode/context/architecture.md"), "# map\n")
    await edit(r, ROOT, "write", { filePath: "lib/w.ts", content: "x" })
    await edit(r, ROOT, "apply_patch", { patchText: "*** Begin Patch\n*** Update File: src/p.ts\n@@\n-a\n+b\n*** Add File: src/q.ts\n+x\n*** End Patch" })
    await turn(r, ROOT)
    expect(r.created).toEqual(["context (auto update)"])
    expect(r.prompts[0]!.text).toContain("- lib/w.ts\n- src/p.ts\n- src/q.ts")
  })

  it("US-20 criterion 3: edits only under node_modules, dist, the map, or outside the root, or an idle of a subagent, create no session", async () => {
    const r = await boot()
    await edit(r, ROOT, "edit", { filePath: join(r.project, "node_modules/x/i.js") })
    await edit(r, ROOT, "write", { filePath: join(r.project, "dist/b.js") })
    await edit(r, ROOT, "write", { filePath: join(r.project, ".opencode/context/decisions.md") })
    await edit(r, ROOT, "write", { filePath: "/somewhere/else.ts" })
    await turn(r, ROOT)
    expect(r.created).toEqual([])
    // a real edit, and a refresh asked for, but the idle is a subagent's (a `general` child: no pool claim)
    await event(r.b, "session.created", { sessionID: "ses_child", info: { id: "ses_child", parentID: ROOT, agent: "general", title: "x (@general subagent)" } })
    await edit(r, "ses_child", "edit", { filePath: join(r.project, "src/a.ts") })
    seedContextQueued(r.b.stateDir, r.project, Date.now())
    await turn(r, "ses_child")
    expect(r.created).toEqual([])
    // the root's idle starts it: the edit was queued
    await turn(r, ROOT)
    expect(r.created).toEqual(["context (auto bootstrap)"])
  })

  it("US-20 criterion 4 and 5: the run's own idle releases its claim and starts no second run; a run that changed no map file logs a warning; no notification", async () => {
    const r = await boot()
    await edit(r, ROOT, "edit", { filePath: join(r.project, "src/a.ts") })
    await turn(r, ROOT)
    r.b.known.set("ses_created_1", { id: "ses_created_1", parentID: undefined, title: "context (auto bootstrap)" } as never)
    await event(r.b, "session.created", { sessionID: "ses_created_1", info: { id: "ses_created_1", title: "context (auto bootstrap)" } })
    await edit(r, "ses_created_1", "write", { filePath: join(r.project, "src/not-by-the-map.ts") })
    // a refresh asked for: any root idle would start one now, whatever the spacing; the run's own does not
    seedContextQueued(r.b.stateDir, r.project, Date.now())
    await turn(r, "ses_created_1")
    expect(await claims(r)).toEqual([])
    expect(r.created).toHaveLength(1)
    expect(contextQueuedIn(r.b.stateDir, r.project)).toBeDefined()
    // and its later idles do not either
    await turn(r, "ses_created_1")
    expect(r.created).toHaveLength(1)
    expect(r.b.logs).toContainEqual({ level: "warn", message: expect.stringMatching(/context map: ctx-\w+ ended without changing the map/) })
    expect(record(r).lastRun).toMatchObject({ outcome: "unchanged" })
    expect(r.b.sends).toEqual([])
  })

  it("US-20 a run that wrote the map ends ok", async () => {
    const r = await boot()
    await edit(r, ROOT, "edit", { filePath: join(r.project, "src/a.ts") })
    await turn(r, ROOT)
    mkdirSync(join(r.project, ".opencode/context"), { recursive: true })
    writeFileSync(join(r.project, ".opencode/context/architecture.md"), "# Architecture\n")
    await turn(r, "ses_created_1")
    expect(r.b.logs).toContainEqual({ level: "info", message: expect.stringMatching(/context map: ctx-\w+ updated the map/) })
    expect(record(r)).toMatchObject({ pending: [], inFlight: null, lastRun: { outcome: "ok" } })
  })

  it("US-20 criterion 6: a failed run (an error in its session) puts its paths back; they are kept in the state directory", async () => {
    const r = await boot()
    await edit(r, ROOT, "edit", { filePath: join(r.project, "src/a.ts") })
    await turn(r, ROOT)
    await busy(r, "ses_created_1")
    await event(r.b, "session.error", { sessionID: "ses_created_1", error: { name: "UnknownError", data: { message: "boom" } } })
    await idle(r, "ses_created_1")
    await settle(r.b)
    expect(record(r)).toMatchObject({ pending: ["src/a.ts"], inFlight: null, lastRun: { outcome: "failed" } })
    expect(r.b.logs).toContainEqual({ level: "warn", message: expect.stringMatching(/failed \(UnknownError: boom\); 1 path goes back in the queue/) })
  })

  it("US-20 a run whose session cannot be created fails at once and keeps its paths", async () => {
    const r = await boot({}, undefined, "create: HTTP 500")
    await edit(r, ROOT, "edit", { filePath: join(r.project, "src/a.ts") })
    await turn(r, ROOT)
    expect(await claims(r)).toEqual([])
    expect(record(r)).toMatchObject({ pending: ["src/a.ts"], lastRun: { outcome: "failed", reason: "create: HTTP 500" } })
  })

  it("US-20 pending paths survive a restart, and `ocpool context refresh`'s marker starts a run at the next idle, inside the spacing", async () => {
    const first = await boot()
    await edit(first, ROOT, "edit", { filePath: join(first.project, "src/a.ts") })
    await first.b.hooks.dispose!()
    expect(record(first).pending).toEqual(["src/a.ts"])
    const again = await boot({}, { project: first.project, stateDir: first.b.stateDir })
    await turn(again, ROOT)
    expect(again.prompts[0]!.text).toContain("- src/a.ts")
    // the run ends; a request inside the 10 minutes starts another at the next idle and is taken
    await turn(again, "ses_created_1")
    seedContextQueued(again.b.stateDir, again.project, Date.now())
    await turn(again, ROOT)
    expect(again.created).toHaveLength(2)
    expect(contextQueuedIn(again.b.stateDir, again.project)).toBeUndefined()
  })

  it("US-20 contextMap:false collects nothing and starts nothing", async () => {
    const r = await boot({ contextMap: false })
    await edit(r, ROOT, "edit", { filePath: join(r.project, "src/a.ts") })
    await turn(r, ROOT)
    expect(r.created).toEqual([])
    expect(contextRecordIn(r.b.stateDir, r.project)).toBeUndefined()
  })

  it("US-20 a refresh session is never coached and never becomes a primary for fallbacks, unlike the user's root session", async () => {
    const r = await boot({ fallbackModels: ["zen/alpha"] })
    await edit(r, ROOT, "edit", { filePath: join(r.project, "src/a.ts") })
    await turn(r, ROOT)
    const coach = async (session: string) => effectOf(await Effect.runPromise(r.b.hooks.engine.apply({ type: "coach", session, model: "go/gamma" })), "Coach")?.line
    expect(await coach(ROOT)).toMatch(/GO|THROTTLE|STOP/)
    expect(await coach("ses_created_1")).toBeUndefined()
    await Effect.runPromise(r.b.hooks.engine.apply({ type: "message", session: "ses_created_1", model: "go/gamma", agent: "context-2" }))
    const state = await Effect.runPromise(r.b.hooks.engine.state)
    expect(state.primaries.has("ses_created_1")).toBe(false)
  })
})
