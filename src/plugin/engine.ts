/**
 * The plugin's programs: each hook maps to one of these. They read shared state through the services,
 * ask the pure core for a decision, and write the result back (SPEC §5–§8).
 */
import { Clock, Duration, Effect } from "effect"
import { isLive, loadByModel, slotLoads, updateClaim, type Claim } from "../core/claims.js"
import { isPooledBase, VARIANT_PATTERN } from "../core/constants.js"
import { applyCool, clearOnSuccess, isCooling, planCool, type CoolPlan, type CooldownTable } from "../core/cooldown.js"
import { afterAbort, judgeClaim, type ReaperTiming } from "../core/reaper.js"
import { pickSlot } from "../core/routing.js"
import { decideLimit, decideRetry, providerOf, type SignalDecision } from "../core/signals.js"
import { renderStatus, statusView } from "../core/status.js"
import type { ResolvedPool } from "../core/source.js"
import { AbortClient } from "../services/AbortClient.js"
import { AppLog } from "../services/AppLog.js"
import { ClaimStore } from "../services/ClaimStore.js"
import { CooldownStore } from "../services/CooldownStore.js"
import { PoolLock } from "../services/PoolLock.js"
import { StateDir } from "../services/StateDir.js"
import { TraceRecorder } from "../services/TraceRecorder.js"
import {
  ACTIVITY_SAMPLE_MS,
  blockedInTree,
  CHILD_MEMORY_MS,
  CHILD_RING,
  CHILD_SLACK_MS,
  SIGNAL_DEDUPE_MS,
  SPIN_REQUESTS,
  SPIN_WINDOW_MS,
  type PoolState
} from "./state.js"

/** Thrown out of `tool.execute.before` on purpose: the one place a hook fails a call (SPEC §6.3). */
export class VariantRefused extends Error {
  constructor(readonly requested: string, readonly base: string) {
    super(`opencode-pool: "${requested}" is a pool slot variant and cannot be spawned by name; spawn "${base}" and the pool picks the slot`)
    this.name = "VariantRefused"
  }
}

export interface EngineConfig {
  readonly timing: ReaperTiming
  readonly reapMs: number
}

const iso = (ms: number): string => new Date(ms).toISOString()

export const makeEngine = (state: PoolState, config: EngineConfig) =>
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

    /** Merges a cool plan into the shared table under the pool lock, and logs it. */
    const cool = (plan: CoolPlan, now: number) =>
      lock.withLock(
        Effect.gen(function* () {
          const table = yield* readTable(now)
          const next = applyCool(table, plan, now)
          const changed = plan.models.flatMap((m) => (next.get(m) !== table.get(m) && next.get(m) !== undefined ? [next.get(m)!] : []))
          if (changed.length > 0) yield* cooldowns.write(changed).pipe(Effect.catchAll((e) => log.log("warn", `writing cooldowns failed: ${e.reason}`)))
          yield* log.log("info", `cooling ${plan.models.join(",")} ${plan.reason} strike ${plan.strike} for ${Math.round(plan.windowMs / 1000)}s until ${iso(plan.until)}`)
          return next
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
    const abortClaim = (c: Claim, origin: "signal" | "hang", cause: string) =>
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
                const table = yield* readTable(now)
                if (!isCooling(table.get(c.model), now)) yield* cool(planCool(table, [c.model], "model", "hang", now, undefined), now)
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
            yield* publish(now)
          })
        )
        return outcome.ok
      })

    /** Back-fill (SPEC §8.2 step 4): the newest unbound-to-us child of the owner, created around the claim. */
    const backfill = (c: Claim, now: number): string | undefined => {
      if (c.ownerSession === null) return undefined
      const ring = state.children.get(c.ownerSession) ?? []
      const bound = new Set(state.claims.flatMap((x) => (x.targetSession === null ? [] : [x.targetSession])))
      for (let i = ring.length - 1; i >= 0; i--) {
        const child = ring[i]!
        if (now - child.createdAt > CHILD_MEMORY_MS) break
        if (child.createdAt < c.acquiredAt - CHILD_SLACK_MS) continue
        if (bound.has(child.id)) continue
        return child.id
      }
      return undefined
    }

    /**
     * A reaper sweep over this process's claims (SPEC §8.2). A sweep still running makes the next one
     * skip. Returns, for the trace line, the claims found blocked and the aborts that failed.
     */
    const sweep = Effect.gen(function* () {
      const none = { blocked: [] as Array<string>, failed: [] as Array<string> }
      if (state.sweeping) return none
      state.sweeping = true
      const now = yield* Clock.currentTimeMillis
      const toAbort = yield* locked(
        Effect.gen(function* () {
          state.lastSweepAt = now
          const aborts: Array<{ claim: Claim; origin: "signal" | "hang" }> = []
          const blocked: Array<string> = []
          let changed = false
          for (const c0 of state.claims) {
            let c = c0
            const verdict0 = judgeClaim(c, { now, blocked: c.targetSession !== null && blockedInTree(state, c.targetSession), lastActivity: (s) => state.activity.get(s) }, config.timing)
            let verdict = verdict0
            if (verdict._tag === "Unbound") {
              const child = backfill(c, now)
              if (child !== undefined) {
                c = updateClaim(c, { targetSession: child })
                replaceClaim(c)
                changed = true
                yield* trace.input({ at: now, type: "bind", claim: c.key, session: child, activity: false })
                verdict = judgeClaim(c, { now, blocked: blockedInTree(state, child), lastActivity: (s) => state.activity.get(s) }, config.timing)
              }
            }
            switch (verdict._tag) {
              case "RetryAbort":
                aborts.push({ claim: c, origin: c.abortOrigin ?? "hang" })
                break
              case "Blocked":
                replaceClaim(updateClaim(c, { heartbeatAt: now }))
                blocked.push(c.key)
                changed = true
                break
              case "Unbound":
                dropClaim(c.key)
                state.reaped++
                changed = true
                yield* log.log("warn", reapLine(c, now, "unbound"))
                break
              case "Hung":
                aborts.push({ claim: c, origin: "hang" })
                break
              case "Young":
              case "Healthy":
                break
            }
          }
          if (changed) yield* publish(now)
          return { aborts, blocked }
        })
      )
      const results = yield* Effect.forEach(toAbort.aborts, ({ claim, origin }) => abortClaim(claim, origin, origin === "signal" ? "signal" : "hang"), { concurrency: 4 })
      return { blocked: toAbort.blocked, failed: toAbort.aborts.flatMap((a, i) => (results[i] === true ? [] : [a.claim.key])) }
    }).pipe(
      Effect.catchAllCause((cause) => Effect.as(log.log("error", `reaper failed: ${cause.toString().split("\n")[0]}`), { blocked: [] as Array<string>, failed: [] as Array<string> })),
      Effect.ensuring(Effect.sync(() => void (state.sweeping = false)))
    )

    const sweepFields = (r: { readonly blocked: ReadonlyArray<string>; readonly failed: ReadonlyArray<string> }) => ({
      ...(r.blocked.length > 0 ? { blocked: r.blocked } : {}),
      ...(r.failed.length > 0 ? { aborts: Object.fromEntries(r.failed.map((k) => [k, "fail"])) } : {})
    })

    /** The timer's sweep, recorded as a `sweep` line. */
    const timerSweep = Effect.gen(function* () {
      const r = yield* sweep
      const now = yield* Clock.currentTimeMillis
      yield* trace.input({ at: now, type: "sweep", ...sweepFields(r) })
    })

    /** SPEC §6.3 step 2: sweep, then pick and publish under the lock. Returns the variant to run. */
    const route = (sessionID: string, callID: string, base: string) =>
      Effect.gen(function* () {
        const swept = yield* sweep
        return yield* locked(
          lock.withLock(
            Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              const peers = yield* claims.readPeers(now).pipe(Effect.catchAll((e) => Effect.as(log.log("warn", `reading peer claims failed: ${e.reason}`), [])))
              const table = yield* readTable(now)
              const key = `${sessionID}:${callID}`
              if (state.claims.some((c) => c.key === key)) dropClaim(key)
              const own = loadByModel(state.claims, now)
              const peerLoad = new Map<string, number>()
              for (const p of peers) for (const c of p.claims) if (isLive(c, now)) peerLoad.set(c.model, (peerLoad.get(c.model) ?? 0) + 1)
              const loads = slotLoads(state.slots, own, peerLoad)
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
              const peersRecord: Record<string, number> = {}
              for (const [m, n] of peerLoad) peersRecord[m] = n
              const peerCooling = [...table.values()].filter((r) => isCooling(r, now)).map((r) => ({ model: r.model, until: r.until, reason: r.reason }))
              yield* trace.input({ at: now, type: "spawn", claim: key, base, session: sessionID, ...sweepFields(swept), ...(peerLoad.size > 0 ? { peers: peersRecord } : {}), ...(peerCooling.length > 0 ? { peerCooling } : {}) })
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

    /** A classified signal on a session (SPEC §7.8): cool, then abort a pooled target, release on success. */
    const signal = (session: string | undefined, decide: (table: CooldownTable, now: number) => SignalDecision, text: string, record: Record<string, unknown>) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (session !== undefined) {
          const dedupeKey = `${session}\u0000${text}`
          const last = state.signals.get(dedupeKey)
          if (last !== undefined && now - last < SIGNAL_DEDUPE_MS) return
          state.signals.set(dedupeKey, now)
        }
        const target = session === undefined ? undefined : liveTarget(session, now)
        const table = yield* readTable(now)
        const decision = decide(table, now)
        if (decision._tag === "Ignore") {
          yield* trace.input({ at: now, ...record } as { at: number; type: string })
          return
        }
        yield* cool(decision.plan, now)
        yield* oneTimeWarnings(decision, text, now)
        if (target === undefined) {
          yield* trace.input({ at: now, ...record } as { at: number; type: string })
          return
        }
        state.signalled.add(target.key)
        const ok = yield* abortClaim(target, "signal", decision.cls)
        yield* trace.input({ at: now, ...record, ...(ok ? {} : { abort: "fail" }) } as { at: number; type: string })
      })

    const onError = (session: string, error: unknown, model: string | undefined) =>
      Effect.gen(function* () {
        const e = (typeof error === "object" && error !== null ? error : {}) as { name?: unknown; data?: Record<string, unknown> }
        const now = yield* Clock.currentTimeMillis
        if (e.name === "MessageAbortedError") {
          const c = liveTarget(session, now)
          if (c !== undefined && !state.aborting.has(c.key)) yield* release(c.key, false)
          return
        }
        const text = JSON.stringify(error ?? null)
        const status = typeof e.data?.statusCode === "number" ? e.data.statusCode : undefined
        const headers = typeof e.data?.responseHeaders === "object" && e.data.responseHeaders !== null ? (e.data.responseHeaders as Record<string, unknown>) : undefined
        const metadata = e.data?.metadata as { provider?: unknown } | undefined
        const provider = typeof metadata?.provider === "string" ? metadata.provider : undefined
        const target = liveTarget(session, now)
        const attributed = model ?? target?.model
        yield* signal(
          session,
          (table, t) => decideLimit(state.slots, table, { text, status, headers, model: attributed, provider }, t),
          text,
          { type: "limit", text, ...(status === undefined ? {} : { status }), ...(headers === undefined ? {} : { headers }), ...(model === undefined ? {} : { model }), ...(provider === undefined ? {} : { provider }), session }
        )
      })

    const onRetry = (session: string, message: string, next: number, provider: string | undefined) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const target = liveTarget(session, now)
        yield* signal(
          session,
          (table, t) => decideRetry(state.slots, table, { message, next, provider, model: target?.model, pooled: target !== undefined }, t),
          message,
          { type: "retry", session, message, next, ...(provider === undefined ? {} : { provider }) }
        )
      })

    /** Sampled activity (SPEC §6.4): at most once per 10 s per session; refreshes heartbeats of claims on it. */
    const activity = (session: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const last = state.activity.get(session)
        if (last !== undefined && now - last < ACTIVITY_SAMPLE_MS) return
        state.activity.set(session, now)
        if (state.claims.some((c) => c.targetSession === session)) {
          yield* locked(
            Effect.gen(function* () {
              setClaims(state.claims.map((c) => (c.targetSession === session ? updateClaim(c, { heartbeatAt: now }) : c)))
              yield* publish(now)
            })
          )
        }
        yield* trace.input({ at: now, type: "activity", session })
      })

    /** An answered question or permission is activity of every session whose tree holds it (SPEC §6.4). */
    const answered = (session: string, id: string) =>
      Effect.gen(function* () {
        yield* ask(session, id, false)
        let s: string | undefined = session
        for (let depth = 0; s !== undefined && depth < 64; depth++) {
          yield* activity(s)
          s = state.parents.get(s)
        }
      })

    /** A child session appeared (SPEC §6.4 binding). */
    const childCreated = (id: string, parent: string, agent: string | undefined, title: string | undefined) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        state.parents.set(id, parent)
        const ring = state.children.get(parent) ?? []
        ring.push({ id, createdAt: now, agent })
        while (ring.length > CHILD_RING) ring.shift()
        state.children.set(parent, ring)
        const variant = agent ?? /\(@([a-z]+-[0-9]+) subagent\)\s*$/.exec(title ?? "")?.[1]
        const unbound = state.claims.filter((c) => c.ownerSession === parent && c.targetSession === null)
        let match = unbound.find((c) => `${c.base}-${c.slot}` === variant)
        if (match === undefined && (variant === undefined || VARIANT_PATTERN.test(variant))) match = unbound[0]
        if (match !== undefined) yield* bind(match.key, id, true)
      })

    const ask = (session: string, id: string, open: boolean) =>
      Effect.sync(() => {
        const set = state.asks.get(session) ?? new Set<string>()
        if (open) set.add(id)
        else if (id === "*") set.clear()
        else set.delete(id)
        state.asks.set(session, set)
      })

    /** A bound child went idle after being busy: its task ended, even if `tool.execute.after` never comes. */
    const idle = (session: string) =>
      Effect.gen(function* () {
        if (!state.busy.has(session)) return
        state.busy.delete(session)
        const now = yield* Clock.currentTimeMillis
        const c = liveTarget(session, now)
        if (c !== undefined && !state.aborting.has(c.key)) yield* release(c.key, true)
      })

    /** `chat.params`: one model request started (SPEC §8.5). */
    const modelRequest = (session: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const c = liveTarget(session, now)
        if (c === undefined) return
        const times = (state.requests.get(session) ?? []).filter((t) => now - t < SPIN_WINDOW_MS)
        times.push(now)
        state.requests.set(session, times)
        if (times.length < SPIN_REQUESTS) return
        state.requests.delete(session)
        yield* log.log("warn", `spinning session=${session} model=${c.model} requests=${times.length}/${SPIN_WINDOW_MS / 1000}s`)
        // The hook that counts requests runs inside opencode's request loop: abort from outside it.
        yield* Effect.forkDaemon(
          Effect.gen(function* () {
            const ok = yield* abortClaim(c, "hang", "spinning")
            yield* trace.input({ at: now, type: "sweep", spinning: [c.key], ...(ok ? {} : { abort: "fail" }) })
          })
        )
      })

    const markBusy = (session: string) => Effect.sync(() => void state.busy.add(session))

    /** New assistant output in a session resets its spin count. */
    const output = (session: string) => Effect.sync(() => void state.requests.delete(session))

    const applyPool = (pool: ResolvedPool) =>
      Effect.gen(function* () {
        state.slots = pool.slots
        state.origin = pool.origin
        state.poolWarnings = pool.warnings
        for (const w of pool.warnings) yield* log.log("warn", w)
        const now = yield* Clock.currentTimeMillis
        yield* trace.input({ at: now, type: "pool", slots: pool.slots.map((s) => ({ model: s.model, weight: s.weight })) })
      })

    const statusText = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const peers = yield* claims.readPeers(now).pipe(Effect.orElseSucceed(() => []))
      const table = yield* readTable(now)
      const processes = [{ pid: self.pid, host: self.host, reaped: state.reaped, claims: state.claims, self: true }, ...peers]
      const view = statusView({ origin: state.origin, slots: state.slots, processes, cooldowns: table, now, warnings: state.poolWarnings })
      yield* trace.input({ at: now, type: "status" })
      const failOpens = yield* lock.failOpens
      return `${renderStatus(view, { now, processes, reaper: { intervalMs: config.reapMs, lastSweepAt: state.lastSweepAt } })}${failOpens > 0 ? `\nlock fail-opens: ${failOpens}` : ""}`
    })

    const dispose = Effect.gen(function* () {
      state.claims = []
      yield* claims.removeOwn
    })

    return {
      beforeTask,
      release,
      sweep,
      timerSweep,
      onError,
      onRetry,
      activity,
      childCreated,
      ask,
      answered,
      idle,
      markBusy,
      modelRequest,
      output,
      applyPool,
      statusText,
      dispose
    }
  })

export type Engine = Effect.Effect.Success<ReturnType<typeof makeEngine>>

/** The reaper (SPEC §8.1): one sweep at start, then one every `reapMs`, until interrupted (dispose). */
export const reaperLoop = (engine: Engine, reapMs: number): Effect.Effect<never> =>
  Effect.zipRight(engine.timerSweep, Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(reapMs)), engine.timerSweep)))
