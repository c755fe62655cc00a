/**
 * What every plugin program shares: the services, this process's state, the in-process mutex, and the
 * small steps they all use (publish own claims, read the cooldown table, cool under the pool lock,
 * abort a claim's session and settle the claim).
 */
import { Clock, Effect } from "effect"
import { isLive, type Claim } from "../core/claims.js"
import { applyCool, isCooling, planCool, type CoolPlan, type CooldownTable } from "../core/cooldown.js"
import { afterAbort, type ReaperTiming } from "../core/reaper.js"
import { providerOf, type SignalDecision } from "../core/signals.js"
import { AbortClient } from "../services/AbortClient.js"
import { AppLog } from "../services/AppLog.js"
import { ClaimStore } from "../services/ClaimStore.js"
import { CooldownStore } from "../services/CooldownStore.js"
import { PoolLock } from "../services/PoolLock.js"
import { StateDir } from "../services/StateDir.js"
import { TraceRecorder } from "../services/TraceRecorder.js"
import type { PoolState } from "./state.js"

export interface EngineConfig {
  readonly timing: ReaperTiming
  readonly reapMs: number
}

export const iso = (ms: number): string => new Date(ms).toISOString()

export const makeContext = (state: PoolState, config: EngineConfig) =>
  Effect.gen(function* () {
    const log = yield* AppLog
    const claims = yield* ClaimStore
    const cooldowns = yield* CooldownStore
    const lock = yield* PoolLock
    const aborter = yield* AbortClient
    const trace = yield* TraceRecorder
    const self = yield* StateDir
    const mutex = yield* Effect.makeSemaphore(1)
    const locked = <A, E, R>(eff: Effect.Effect<A, E, R>) => mutex.withPermits(1)(eff)

    const publish = (now: number) =>
      claims.publish({ claims: state.claims, reaped: state.reaped }, now).pipe(
        Effect.catchAll((e) => log.log("warn", `publishing claims failed: ${e.reason}`))
      )

    const readTable = (now: number) =>
      cooldowns.readAll(now).pipe(Effect.catchAll((e) => Effect.as(log.log("warn", `reading cooldowns failed: ${e.reason}`), new Map() as CooldownTable)))

    /**
     * Under the pool lock: reads the shared table, plans from it (strikes escalate from what every
     * process recorded, not from an earlier read), merges the plan and writes the changed records.
     * Returns the plan, or `undefined` when the planner decided nothing cools.
     */
    const cool = (planFrom: (table: CooldownTable) => CoolPlan | undefined, now: number) =>
      lock.withLock(
        Effect.gen(function* () {
          const table = yield* readTable(now)
          const plan = planFrom(table)
          if (plan === undefined) return undefined
          const next = applyCool(table, plan, now)
          const changed = plan.models.flatMap((m) => (next.get(m) !== table.get(m) && next.get(m) !== undefined ? [next.get(m)!] : []))
          if (changed.length > 0) yield* cooldowns.write(changed).pipe(Effect.catchAll((e) => log.log("warn", `writing cooldowns failed: ${e.reason}`)))
          yield* log.log("info", `cooling ${plan.models.join(",")} ${plan.reason} strike ${plan.strike} for ${Math.round(plan.windowMs / 1000)}s until ${iso(plan.until)}`)
          return plan
        })
      )

    const oneTimeWarnings = (decision: SignalDecision & { _tag: "Cool" }, text: string, now: number) =>
      Effect.gen(function* () {
        const { cls, plan } = decision
        if (cls !== "unavailable" && cls !== "auth") return
        const key = cls === "auth" ? `auth:${providerOf(plan.models[0]!)}` : `unavailable:${plan.models[0]}`
        if ((state.warnedUntil.get(key) ?? 0) > now) return
        state.warnedUntil.set(key, plan.until)
        yield* cls === "auth"
          ? log.log("warn", `provider ${providerOf(plan.models[0]!)} rejected its credentials; ${plan.models.length} slot(s) cool for 15m`)
          : log.log("warn", `model ${plan.models[0]} unavailable ("${text.slice(0, 80)}"); not routed until ${iso(plan.until).slice(11, 16)}Z`)
      })

    const liveTarget = (session: string, now: number): Claim | undefined =>
      state.claims.find((c) => c.targetSession === session && isLive(c, now))

    const setClaims = (next: ReadonlyArray<Claim>) => {
      state.claims = next
    }
    const replaceClaim = (c: Claim) => setClaims(state.claims.map((x) => (x.key === c.key ? c : x)))
    const dropClaim = (key: string) => {
      setClaims(state.claims.filter((x) => x.key !== key))
      state.signalled.delete(key)
    }

    const reapLine = (c: Claim, now: number, outcome: "aborted" | "unbound" | "gave_up") => {
      const last = c.targetSession === null ? undefined : state.activity.get(c.targetSession)
      const silence = c.targetSession === null ? "-" : `${Math.round((now - Math.max(last ?? c.acquiredAt, c.acquiredAt)) / 1000)}s`
      return `reaped claim=${c.key} session=${c.targetSession ?? "-"} model=${c.model} age=${Math.round((now - c.acquiredAt) / 1000)}s silence=${silence} outcome=${outcome}`
    }

    /** One abort attempt on a claim, and what follows (SPEC §7.8, §8.2, §8.4). Runs outside the mutex. */
    /** `publishNow: false` leaves publishing to the caller (a sweep publishes once for all its releases, SPEC §8.2). */
    const abortClaim = (c: Claim, origin: "signal" | "hang", cause: string, publishNow = true) =>
      Effect.gen(function* () {
        const session = c.targetSession
        if (session === null) return true
        if (state.aborting.has(c.key)) return false
        state.aborting.add(c.key)
        yield* log.log("debug", `aborting claim=${c.key} session=${session} (${cause})`)
        const outcome = yield* aborter.abort(session).pipe(
          Effect.as({ ok: true as const, reason: "" }),
          Effect.catchAll((e) => Effect.succeed({ ok: false as const, reason: e.reason })),
          Effect.ensuring(Effect.sync(() => void state.aborting.delete(c.key)))
        )
        const now = yield* Clock.currentTimeMillis
        yield* log.log("debug", `abort of ${session}: ${outcome.ok ? "confirmed" : outcome.reason}`)
        yield* locked(
          Effect.gen(function* () {
            const current = state.claims.find((x) => x.key === c.key)
            if (current === undefined) return
            const next = afterAbort(current, outcome.ok, origin)
            switch (next._tag) {
              case "ReleaseSignal":
                dropClaim(c.key)
                yield* log.log("info", `released claim=${c.key} after ${cause}`)
                break
              case "ReleaseHung": {
                yield* cool((table) => (isCooling(table.get(c.model), now) ? undefined : planCool(table, [c.model], "model", "hang", now, undefined)), now)
                dropClaim(c.key)
                state.reaped++
                yield* log.log("warn", reapLine(current, now, "aborted"))
                break
              }
              case "GiveUp":
                dropClaim(c.key)
                state.reaped++
                yield* log.log("error", reapLine(current, now, "gave_up"))
                yield* log.log("error", `abort gave up after 3 attempts: session ${session} is still running; stop it by hand`)
                break
              case "Keep":
                replaceClaim(next.claim)
                yield* log.log("warn", `abort failed claim=${c.key} session=${session} attempt=${next.claim.abortAttempts}/3: ${outcome.reason}`)
                break
            }
            if (publishNow) yield* publish(now)
          })
        )
        return outcome.ok
      })

    return {
      state,
      config,
      log,
      claims,
      cooldowns,
      lock,
      trace,
      self,
      locked,
      publish,
      readTable,
      cool,
      oneTimeWarnings,
      liveTarget,
      setClaims,
      replaceClaim,
      dropClaim,
      reapLine,
      abortClaim
    }
  })

export type Context = Effect.Effect.Success<ReturnType<typeof makeContext>>
