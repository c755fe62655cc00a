/**
 * One stress worker: boots the plugin from sources over the real file layers in a shared state dir,
 * then runs spawn/release cycles with random jitter, holding up to 3 claims at a time. Prints one JSON
 * line: every pick as the routing log saw it under the lock, and the lock fail-open count.
 */
import { isLive } from "../../src/core/pool/claims.js"
import { parseSettings } from "../../src/core/options.js"
import type { SharedStateService } from "../../src/services/state/SharedState.js"
import { AbortClientMemory } from "../../src/layers/opencode/AbortClientMemory.js"
import { NotifierNone } from "../../src/layers/notify/NotifierNone.js"
import { AppLogMemory } from "../../src/layers/opencode/AppLogMemory.js"
import { makeHooks } from "../../src/plugin/hooks.js"
import { liveLayer } from "../../src/plugin/live.js"
import type { LogLevel } from "../../src/services/opencode/AppLog.js"

const [stateDir, cyclesArg, id] = process.argv.slice(2)
const cycles = Number(cyclesArg)
const logs: Array<{ level: LogLevel; message: string }> = []
const { settings } = parseSettings(
  { stateDir, reapMs: 3_600_000, lockWaitMs: 60_000, models: { slots: [{ model: "p/a", weight: 2 }, { model: "p/b", weight: 2 }, { model: "q/c", weight: 1 }, { model: "q/d", weight: 1 }] } },
  {}
)
/**
 * After each transaction that added a claim (a pick): the picked model's global live load, counted
 * from the peers it read and the claims it committed, both under the pool lock.
 */
const globalAtPick: Array<number> = []
let lastKey: string | undefined
const wrapState = (inner: SharedStateService): SharedStateService => ({
  ...inner,
  transact: (now, needs, decide) =>
    inner.transact(now, needs, (snapshot) => {
      const decided = decide(snapshot)
      const own = decided.commit.claims
      const newest = own?.claims.at(-1)
      if (own !== undefined && newest !== undefined && newest.key !== lastKey && newest.acquiredAt === now) {
        lastKey = newest.key
        let load = own.claims.filter((c) => c.model === newest.model && isLive(c, now)).length
        for (const p of snapshot.peers) load += p.claims.filter((c) => c.model === newest.model && isLive(c, now)).length
        globalAtPick.push(load)
      }
      return decided
    })
})
const hooks = await makeHooks(
  liveLayer({ client: undefined, directory: process.cwd() }, settings, { log: AppLogMemory(logs), abort: AbortClientMemory(["ok"], []), notifier: NotifierNone("not in this run"), wrapState }),
  { settings, warnings: [] }
)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const held: Array<string> = []
for (let i = 0; i < cycles; i++) {
  const call = `w${id}c${i}`
  const output = { args: { subagent_type: "explore" } as Record<string, unknown> }
  await hooks["tool.execute.before"]!({ tool: "task", sessionID: `s${id}`, callID: call }, output)
  held.push(call)
  if (held.length > 3) {
    const done = held.shift()!
    await hooks["tool.execute.after"]!({ tool: "task", sessionID: `s${id}`, callID: done, args: {} }, { title: "", output: "", metadata: {} })
  }
  await sleep(Math.floor(Math.random() * 4))
  if (i === Math.floor(cycles / 2)) process.stderr.write(`half ${id}\n`)
}
const status = (await (hooks.tool!.pool_status as { execute: (a: unknown, c: unknown) => Promise<string> }).execute({}, {})) as string
const failOpens = Number(/lock fail-opens: (\d+)/.exec(status)?.[1] ?? "0")
const picks = logs.flatMap((l) => {
  const m = /^routed \w+ -> \S+ slot=(\d+) model=\S+ load=(\d+)\/(\d+) pass=(\w+)$/.exec(l.message)
  return m === null ? [] : [{ slot: Number(m[1]), load: Number(m[2]), cap: Number(m[3]), pass: m[4] }]
}).map((p, i) => ({ ...p, global: globalAtPick[i] }))
await hooks.dispose!()
process.stdout.write(`${JSON.stringify({ id, picks, failOpens })}\n`)
