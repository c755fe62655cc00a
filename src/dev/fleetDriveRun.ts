/**
 * The fleet driver (issue 22 item 5; issue 34 moved it out of `ocpool`, whose `fleet drive` it was): a
 * driver for tests, benchmarks and the demo, run as `node dist/dev-fleet-drive.js` (fleetDrive.ts reads
 * its flags). It boots the plugin's own hooks in this process over the backend its config chooses (the
 * same live layers as in opencode: the configured shared-state port, the pure pick), waits for
 * `--start-at`, then spawns base `explore` N times through `tool.execute.before`, exactly as opencode
 * calls the plugin for a `task`.
 *
 * What it feeds the hooks, and why:
 * - a pick: `tool.execute.before` of a `task` call (session `drive-<pid>`, call `c<i>`: the claim key is
 *   `drive-<pid>:c<i>`), then the `session.created` event of its child session (parent `drive-<pid>`,
 *   agent the routed slot agent), which binds the claim to the child as opencode's own event does;
 * - a release: the child's `session.error` with a `MessageAbortedError` (a cancelled task). The engine
 *   ends the claim with `ok: false` (core/engine/signal.ts → endTask): never a success, so it never
 *   clears a cooldown. `tool.execute.after` of the task is not used: the plugin counts it as a success,
 *   which clears the model's spent cooldown record;
 * - a cool: `message.updated` of a failed assistant message of MODEL on the root session `drive-<pid>`
 *   (an APIError with status 429 and `retry-after: W/1000`), which the plugin classifies as `rate_limit`
 *   with model scope and a stated window of W ms, committed in its transaction.
 * The shared state is wrapped (`wrapState`) to observe, inside each transaction, the snapshot the pick
 * used and the commit it wrote: the picked model's fleet-wide live load and the cooling models.
 */
import { Console, Effect } from "effect"
import { readFileSync } from "node:fs"
import { coolingAt, eventLine, fleetLoad, pauseMs, routedLine, mulberry32, type DriveEvent, type DriveFlags, type PickSeen } from "../core/state/drive.js"
import { parseSettings } from "../core/options.js"
import { printable } from "../core/printable.js"
import { NotifierNone } from "../layers/notify/NotifierNone.js"
import { AbortClientMemory } from "../layers/opencode/AbortClientMemory.js"
import { AppLogMemory, type MemoryLine } from "../layers/opencode/AppLogMemory.js"
import { ownHostId } from "../layers/state/StateDirFile.js"
import { makeHooks } from "../plugin/hooks.js"
import { liveLayer } from "../plugin/live.js"
import type { SharedStateService } from "../services/state/SharedState.js"
import { BadInput } from "../cli/errors.js"
import { isRecord } from "../core/json.js"

/** Wall-clock epoch ms as a float. */
const wallNow = (): number => performance.timeOrigin + performance.now()

/** The plugin's options read from `path`: a JSON object, else exit 2 in one line. */
export const readDriveConfig = (path: string): Effect.Effect<Record<string, unknown>, BadInput> =>
  Effect.suspend(() => {
    let text: string
    try {
      text = readFileSync(path, "utf8")
    } catch (e) {
      const code = (e as { code?: unknown }).code
      return Effect.fail(new BadInput({
          message: `--config ${printable(path)}: cannot read it (${typeof code === "string" ? code : e instanceof Error ? e.message : String(e)})`,
          option: "--config",
          value: path
        }))
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (e) {
      return Effect.fail(new BadInput({ message: `--config ${printable(path)}: not valid JSON (${printable(e instanceof Error ? e.message : String(e))})`, option: "--config", value: path }))
    }
    if (!isRecord(parsed)) return Effect.fail(new BadInput({ message: `--config ${printable(path)}: not a JSON object (the plugin's options)`, option: "--config", value: path }))
    return Effect.succeed(parsed)
  })

/** The 429 opencode records on a failed assistant message of `model`, its `retry-after` saying `ms`. */
const rateLimited = (session: string, model: string, ms: number, at: number) => {
  const slash = model.indexOf("/")
  return {
    event: {
      type: "message.updated",
      properties: {
        info: {
          id: `msg-cool-${Math.round(at)}`,
          sessionID: session,
          role: "assistant",
          providerID: model.slice(0, slash),
          modelID: model.slice(slash + 1),
          time: { created: Math.round(at), completed: Math.round(at) },
          error: {
            name: "APIError",
            data: {
              message: "Rate limit exceeded",
              statusCode: 429,
              isRetryable: true,
              responseHeaders: { "retry-after": String(ms / 1000) },
              responseBody: '{"error":{"message":"Rate limit exceeded","type":"rate_limit_error"}}'
            }
          }
        }
      }
    }
  }
}

export const driveRun = (flags: DriveFlags, env: Readonly<Record<string, string | undefined>>) =>
  Effect.gen(function* () {
    const options = yield* readDriveConfig(flags.config)
    const parsed = parseSettings(options, env)
    // the driver reads the engine's `routed` lines: they are logged at info
    const settings = parsed.settings.logLevel === "warn" || parsed.settings.logLevel === "error" ? { ...parsed.settings, logLevel: "info" as const } : parsed.settings
    const host = ownHostId()
    const pid = process.pid
    const lines: Array<MemoryLine> = []
    const out = (e: DriveEvent) => Console.log(eventLine(e))
    /** The plugin's log lines so far, to stderr; the `routed` line of this pick, if any. */
    const drain = Effect.suspend(() => {
      const taken = lines.splice(0, lines.length)
      return Effect.as(
        Effect.forEach(taken, (l) => Console.error(`${l.level}: ${printable(l.message)}`), { discard: true }),
        taken.flatMap((l) => {
          const r = routedLine(l.message)
          return r === undefined ? [] : [r]
        }).at(-1)
      )
    })

    // observed inside each transaction: the pick of the expected claim key, the cooldowns committed
    let expecting: string | undefined
    let seen: PickSeen | undefined
    let cooled: Array<{ readonly model: string; readonly until: number }> = []
    let inner: SharedStateService | undefined
    const wrapState = (service: SharedStateService): SharedStateService => {
      inner = service
      return {
        ...service,
        transact: (now, needs, decide) =>
          service.transact(now, needs, (snapshot) => {
            const decided = decide(snapshot)
            const own = decided.commit.claims?.claims
            const made = own?.find((c) => c.key === expecting)
            if (own !== undefined && made !== undefined) {
              seen = { key: made.key, model: made.model, load: fleetLoad(own, snapshot.peers, made.model, now), cooling: coolingAt(snapshot.cooldowns, now) }
            }
            for (const c of decided.commit.cool) cooled.push({ model: c.model, until: c.until })
            return decided
          })
      }
    }

    for (const w of parsed.warnings) yield* Console.error(`warn: ${printable(w)}`)
    const hooks = yield* Effect.promise(() =>
      makeHooks(
        liveLayer({ client: undefined, directory: process.cwd() }, settings, {
          log: AppLogMemory(lines),
          abort: AbortClientMemory(["ok"], []),
          notifier: NotifierNone("fleet drive sends no notifications"),
          wrapState
        }),
        { settings, warnings: parsed.warnings }
      )
    )
    const before = hooks["tool.execute.before"]!
    const event = hooks.event!
    const owner = `drive-${pid}`
    const childOf = (i: number) => `drive-${pid}-child-${i}`

    return yield* Effect.gen(function* () {
      yield* drain
      yield* out({ ev: "start", host, pid, backend: settings.state.backend })
      const wait = flags.startAt - Date.now()
      if (wait > 0) yield* Effect.sleep(wait)

      const random = mulberry32(flags.seed)
      const held: Array<{ readonly key: string; readonly child: string }> = []
      let picks = 0
      const release = (h: { readonly key: string; readonly child: string }) =>
        Effect.gen(function* () {
          yield* out({ ev: "release", host, key: h.key, at: wallNow() })
          yield* Effect.promise(() =>
            event({ event: { type: "session.error", properties: { sessionID: h.child, error: { name: "MessageAbortedError", data: { message: "The operation was aborted." } } } } } as never)
          )
          yield* drain
        })

      for (let i = 1; i <= flags.picks; i++) {
        if (held.length >= flags.hold) yield* release(held.shift()!)
        const call = `c${i}`
        const key = `${owner}:${call}`
        expecting = key
        seen = undefined
        const output = { args: { subagent_type: "explore" } as Record<string, unknown> }
        yield* Effect.promise(() => before({ tool: "task", sessionID: owner, callID: call }, output as never))
        const at = wallNow()
        expecting = undefined
        const routed = yield* drain
        const pick = seen as PickSeen | undefined
        if (routed === undefined || pick === undefined || output.args.subagent_type !== routed.agent) {
          yield* Console.error(`warn: pick ${i} was not routed (no route decision or no claim committed)`)
        } else {
          picks++
          yield* out({ ev: "pick", host, key, model: routed.model, slot: routed.slot, pass: routed.pass, load: pick.load, cap: routed.cap, cooling: pick.cooling, at })
          // opencode creates the task's child session: the claim is bound to it
          yield* Effect.promise(() =>
            event({ event: { type: "session.created", properties: { info: { id: childOf(i), parentID: owner, agent: routed.agent, title: `drive pick ${i} (@${routed.agent} subagent)` } } } } as never)
          )
          yield* drain
          held.push({ key, child: childOf(i) })
        }
        if (flags.cool !== undefined && i === flags.cool.after) {
          const model = flags.cool.model
          cooled = []
          yield* Effect.promise(() => event(rateLimited(owner, model, flags.cool!.ms, wallNow()) as never))
          const coolAt = wallNow()
          yield* drain
          const mine = cooled.filter((c) => c.model === model).at(-1)
          if (mine === undefined) yield* Console.error(`warn: the 429 of ${printable(model)} cooled nothing (is it a slot of the pool?)`)
          else yield* out({ ev: "cool", host, model, until: mine.until, at: coolAt })
        }
        const pause = pauseMs(random, flags.pauseMs)
        if (pause > 0 && i < flags.picks) yield* Effect.sleep(pause)
      }
      while (held.length > 0) yield* release(held.shift()!)
      const stats = inner === undefined ? { failOpens: 0, fallbacks: 0 } : yield* inner.stats
      yield* out({ ev: "done", host, picks, failOpens: stats.failOpens, fallbacks: stats.fallbacks ?? 0 })
    }).pipe(
      Effect.ensuring(
        Effect.zipRight(
          Effect.promise(() => hooks.dispose!()),
          drain
        )
      )
    )
  })
