/** Spawns and their ends (SPEC §6.3–6.4): routing under the pool lock, refusal, binding, release. */
import { Clock, Effect } from "effect"
import { isLive, slotLoads, updateClaim, type Claim } from "../core/claims.js"
import { isPooledBase, VARIANT_PATTERN } from "../core/constants.js"
import { clearOnSuccess, isCooling } from "../core/cooldown.js"
import { pickSlot } from "../core/routing.js"
import type { Context } from "./context.js"
import type { makeReaper } from "./reaper.js"

/** Thrown out of `tool.execute.before` on purpose: the one place a hook fails a call (SPEC §6.3). */
export class VariantRefused extends Error {
  constructor(readonly requested: string, readonly base: string) {
    super(`opencode-pool: "${requested}" is a pool slot variant and cannot be spawned by name; spawn "${base}" and the pool picks the slot`)
    this.name = "VariantRefused"
  }
}

export const makeSpawns = (ctx: Context, reaper: ReturnType<typeof makeReaper>) => {
  const { state, log, claims, cooldowns, lock, trace, locked, publish, readTable, setClaims, replaceClaim, dropClaim } = ctx
  /** SPEC §6.3 step 2: sweep, then pick and publish under the lock. Returns the variant to run. */
  const route = (sessionID: string, callID: string, base: string) =>
    Effect.gen(function* () {
      const swept = yield* reaper.sweep
      return yield* locked(
        lock.withLock(
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const peers = yield* claims.readPeers(now).pipe(Effect.catchAll((e) => Effect.as(log.log("warn", `reading peer claims failed: ${e.reason}`), [])))
            const table = yield* readTable(now)
            const key = `${sessionID}:${callID}`
            if (state.claims.some((c) => c.key === key)) dropClaim(key)
            const peerLoad: Record<string, number> = {}
            for (const p of peers) for (const c of p.claims) if (isLive(c, now)) peerLoad[c.model] = (peerLoad[c.model] ?? 0) + 1
            const loads = slotLoads(state.slots, state.claims, now, peerLoad)
            const pick = pickSlot({ weights: state.slots.map((s) => s.weight), loads, cooling: state.slots.map((s) => isCooling(table.get(s.model), now)) })
            if (pick === undefined) return undefined
            const slot = state.slots[pick.position]!
            const claim: Claim = {
              key,
              base,
              slot: slot.index,
              model: slot.model,
              acquiredAt: now,
              heartbeatAt: now,
              ownerSession: sessionID,
              targetSession: null,
              abortAttempts: 0,
              abortPending: false,
              abortOrigin: null
            }
            setClaims([...state.claims, claim])
            yield* publish(now)
            const peerCooling = [...table.values()].filter((r) => isCooling(r, now)).map((r) => ({ model: r.model, until: r.until, reason: r.reason }))
            yield* trace.input({ at: now, type: "spawn", claim: key, base, session: sessionID, ...reaper.sweepFields(swept), ...(Object.keys(peerLoad).length > 0 ? { peers: peerLoad } : {}), ...(peerCooling.length > 0 ? { peerCooling } : {}) })
            yield* log.log("info", `routed ${base} -> ${base}-${slot.index} slot=${slot.index} model=${slot.model} load=${loads[pick.position]! + 1}/${2 * slot.weight} pass=${pick.pass}`)
            return `${base}-${slot.index}`
          })
        )
      )
    })

  /** `tool.execute.before` for `task` (SPEC §6.3). Fails with `VariantRefused` for a hand-named variant. */
  const beforeTask = (sessionID: string, callID: string, args: Record<string, unknown>) =>
    Effect.gen(function* () {
      const name = args.subagent_type
      if (typeof name !== "string") return
      const variant = VARIANT_PATTERN.exec(name)
      if (variant !== null) {
        yield* log.log("warn", `refused manual variant ${name}; spawn ${variant[1]}`)
        return yield* Effect.fail(new VariantRefused(name, variant[1]!))
      }
      if (!isPooledBase(name)) return
      const agent = yield* route(sessionID, callID, name).pipe(
        Effect.catchAllCause((cause) => Effect.as(log.log("error", `routing failed, spawn unchanged: ${cause.toString().split("\n")[0]}`), undefined))
      )
      if (agent === undefined) return
      args.subagent_type = agent
      if (typeof args.task_id === "string" && args.task_id !== "") yield* bind(`${sessionID}:${callID}`, args.task_id, true)
    })

  const bind = (key: string, session: string, activity: boolean) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      yield* locked(
        Effect.gen(function* () {
          const c = state.claims.find((x) => x.key === key)
          if (c === undefined) return
          replaceClaim(activity ? updateClaim(c, { targetSession: session, heartbeatAt: now }) : updateClaim(c, { targetSession: session }))
          if (activity) state.activity.set(session, now)
          yield* publish(now)
        })
      )
      yield* trace.input({ at: now, type: "bind", claim: key, session, ...(activity ? {} : { activity: false }) })
    })

  /** Releases a claim (tool.execute.after, or the end of its bound child). */
  const release = (key: string, ok: boolean) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const released = yield* locked(
        Effect.gen(function* () {
          const c = state.claims.find((x) => x.key === key)
          if (c === undefined) return undefined
          const success = ok && !state.signalled.has(key)
          dropClaim(key)
          if (c.targetSession !== null) state.busy.delete(c.targetSession)
          yield* publish(now)
          if (success) {
            yield* lock.withLock(
              Effect.gen(function* () {
                const table = yield* readTable(now)
                if (clearOnSuccess(table, c.model, now) !== table) yield* cooldowns.remove(c.model).pipe(Effect.catchAll(() => Effect.void))
              })
            )
          }
          return { success }
        })
      )
      if (released !== undefined) yield* trace.input({ at: now, type: "release", claim: key, ...(released.success ? {} : { ok: false }) })
    })

  return { route, beforeTask, bind, release }
}
