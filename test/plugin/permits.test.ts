/**
 * Heavy bash commands through the plugin's hooks (issue 21), over real files in a temp state dir: a
 * heavy command waits for its permit in `tool.execute.before` (its command never rewritten), a light
 * one never waits, an abort of the waiting session ends the wait, `tool.execute.after` releases and
 * appends the waited line, and `pool_status` shows the queue.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { formatDecision } from "../../src/core/trace/format.js"
import { replayText } from "../../src/core/trace/replay.js"
import type { SharedStateService } from "../../src/services/state/SharedState.js"
import { boot, event, tmp, type Booted } from "./boot.js"

const booted: Array<Booted> = []
afterEach(async () => {
  for (const b of booted.splice(0)) await b.hooks.dispose?.()
})

const start = async (options: Record<string, unknown> = {}, stateDir?: string): Promise<Booted> => {
  const b = await boot({ permits: { heavy: 1 }, ...(stateDir === undefined ? {} : { stateDir }), ...options })
  booted.push(b)
  return b
}

const bash = (session: string, call: string, command: string) => ({
  input: { tool: "bash", sessionID: session, callID: call },
  output: { args: { command, description: "run" } }
})

const before = (b: Booted, c: ReturnType<typeof bash>) => b.hooks["tool.execute.before"]!(c.input as never, c.output as never)
const after = (b: Booted, c: ReturnType<typeof bash>, text = "ok\n") => {
  const output = { title: "run", output: text, metadata: {} }
  return b.hooks["tool.execute.after"]!({ ...c.input, args: c.output.args } as never, output as never).then(() => output.output)
}

/** Whether `p` settled (resolved, or rejected: an aborted wait refuses the command) within `ms`. */
const settledWithin = async (p: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([p.then(() => true, () => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))])

describe("heavy bash commands in the plugin (issue 21)", () => {
  it("US-51 the second heavy command waits until the first has ended; a light one runs at once; the waited line is appended; the command is never rewritten", async () => {
    const a = await start()
    const b = await start({}, a.stateDir)
    const first = bash("ses_a", "call_1", "npm test")
    const second = bash("ses_b", "call_2", "cd pkg && cargo build --release")
    await before(a, first)
    const waiting = before(b, second)
    expect(await settledWithin(waiting, 600)).toBe(false)
    const light = bash("ses_c", "call_3", "ls -la && git status")
    expect(await settledWithin(before(b, light), 100)).toBe(true)
    const status = await b.hooks.tool!.pool_status!.execute({} as never, {} as never)
    expect(status).toMatch(/permits:\n {2}heavy: 1\/1 units used, 1 waiting/)
    expect(status).toContain("cargo build --release")
    // the compact view stays the output's last block (issue 24): the queue comes before it, and it counts the permits too
    const text = String(status)
    expect(text.indexOf("cargo build --release")).toBeGreaterThan(0)
    expect(text.indexOf("cargo build --release")).toBeLessThan(text.indexOf("\n\nat a glance:\n"))
    expect(text.slice(text.indexOf("\n\nat a glance:\n"))).toContain("\npermits: heavy 1/1 used, 1 waiting")
    expect(await after(a, first)).toBe("ok\n")
    expect(await settledWithin(waiting, 2_000)).toBe(true)
    expect(second.output.args.command).toBe("cd pkg && cargo build --release")
    expect(await after(b, second)).toMatch(/^ok\n\[opencode-pool\] waited \d+ (ms|s) for a heavy-work permit; 1 command ran before it$/)
  })

  it("US-51 session.error MessageAbortedError of the waiting session ends its wait within a second; the holder keeps its permit", async () => {
    const a = await start()
    const b = await start({}, a.stateDir)
    await before(a, bash("ses_a", "call_1", "make -j4"))
    const waiting = before(b, bash("ses_b", "call_2", "pytest -q"))
    expect(await settledWithin(waiting, 400)).toBe(false)
    await event(b, "session.error", { sessionID: "ses_b", error: { name: "MessageAbortedError", data: { message: "aborted" } } })
    expect(await settledWithin(waiting, 1_000)).toBe(true)
    // the hook refuses the tool call: opencode would otherwise still start the aborted session's command
    await expect(waiting).rejects.toThrow(/was aborted while its command waited for a heavy-work permit; the command does not run/)
    const status = await a.hooks.tool!.pool_status!.execute({} as never, {} as never)
    expect(status).toMatch(/heavy: 1\/1 units used, 0 waiting/)
    expect(status).not.toContain("pytest")
  })

  it("US-51 pool_status reads the shared state once: the permits it shows come from the view's one snapshot (issue 34)", async () => {
    const reads: Array<string> = []
    const counting = (inner: SharedStateService): SharedStateService => ({
      ...inner,
      read: (now, needs) => (reads.push(Object.keys(needs).filter((k) => needs[k as keyof typeof needs] === true).sort().join(",")), inner.read(now, needs))
    })
    const a = await boot({ permits: { heavy: 1 } }, ["ok"], {}, 0, undefined, ["ok"], { wrapState: counting })
    booted.push(a)
    await before(a, bash("ses_a", "call_1", "npm test"))
    reads.length = 0
    const status = await a.hooks.tool!.pool_status!.execute({} as never, {} as never)
    expect(status).toMatch(/permits:\n {2}heavy: 1\/1 units used, 0 waiting/)
    expect(reads.filter((r) => r.includes("permits"))).toHaveLength(1)
  })

  it("US-51 heavyCommands:false turns gating off: a heavy command never waits", async () => {
    const a = await start({ heavyCommands: false })
    await before(a, bash("ses_a", "call_1", "npm test"))
    expect(await settledWithin(before(a, bash("ses_b", "call_2", "npm test")), 300)).toBe(true)
  })

  it("US-51 dispose releases what the process holds: another process's command runs", async () => {
    const a = await start()
    const b = await start({}, a.stateDir)
    await before(a, bash("ses_a", "call_1", "npm run build"))
    const waiting = before(b, bash("ses_b", "call_2", "npm run build"))
    expect(await settledWithin(waiting, 400)).toBe(false)
    await a.hooks.dispose?.()
    expect(await settledWithin(waiting, 2_000)).toBe(true)
  })

  it("US-51 the permit lines a plugin records replay to its decisions, and the trace carries token digests, never the tokens", async () => {
    const path = join(tmp(), "permits.trace.jsonl")
    const a = await start({ trace: path })
    const b = await start({}, a.stateDir)
    const first = bash("ses_a", "call_1", "npm test")
    await before(a, first)
    const waiting = before(a, bash("ses_b", "call_2", "go test ./..."))
    expect(await settledWithin(waiting, 400)).toBe(false)
    const third = bash("ses_c", "call_3", "make")
    const behind = before(b, third)
    await event(a, "session.error", { sessionID: "ses_b", error: { name: "MessageAbortedError", data: { message: "aborted" } } })
    expect(await settledWithin(waiting, 1_000)).toBe(true)
    await after(a, first)
    expect(await settledWithin(behind, 2_000)).toBe(true)
    await after(b, third)
    const recorded = readFileSync(path, "utf8")
    const decisions = readFileSync(`${path}.decisions.jsonl`, "utf8")
    for (const act of ["grant", "queue", "cancel", "release"]) expect(decisions).toContain(`"type":"permit","act":"${act}"`)
    expect(recorded).toMatch(/"token":"sha256:[0-9a-f]{16}"/)
    expect(recorded).not.toMatch(/"token":"[0-9a-f]{32}"/)
    const replayed = replayText(recorded)
    expect(replayed.error).toBeUndefined()
    expect(replayed.decisions.map((d) => `${formatDecision(d)}\n`).join("")).toBe(decisions)
  })
})
