/** The reaper's sweep (SPEC §8.1–8.2): pending aborts, blocked children, unbound and hung claims. */
import { Clock, Duration, Effect } from "effect"
import { updateClaim, type Claim } from "../core/claims.js"
import { judgeClaim } from "../core/reaper.js"
import type { Context } from "./context.js"
import { blockedInTree, CHILD_MEMORY_MS, CHILD_SLACK_MS, forgetQuietSessions } from "./state.js"

export const makeReaper = (ctx: Context) => {
  const { state, config, log, trace, locked, publish, replaceClaim, dropClaim, reapLine, abortClaim } = ctx
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
        return { aborts, blocked, changed }
      })
    )
    const results = yield* Effect.forEach(toAbort.aborts, ({ claim, origin }) => abortClaim(claim, origin, origin === "signal" ? "signal" : "hang", false), { concurrency: 4 })
    // all of this sweep's releases and heartbeats are published in one write (SPEC §8.2)
    if (toAbort.changed || toAbort.aborts.length > 0) yield* locked(publish(yield* Clock.currentTimeMillis))
    return { blocked: toAbort.blocked, failed: toAbort.aborts.flatMap((a, i) => (results[i] === true ? [] : [a.claim.key])) }
  }).pipe(
    Effect.catchAllCause((cause) => Effect.as(log.log("error", `reaper failed: ${cause.toString().split("\n")[0]}`), { blocked: [] as Array<string>, failed: [] as Array<string> })),
    Effect.ensuring(Effect.sync(() => void (state.sweeping = false)))
  )

  const sweepFields = (r: { readonly blocked: ReadonlyArray<string>; readonly failed: ReadonlyArray<string> }) => ({
    ...(r.blocked.length > 0 ? { blocked: r.blocked } : {}),
    ...(r.failed.length > 0 ? { aborts: Object.fromEntries(r.failed.map((k) => [k, "fail"])) } : {})
  })

  /** The timer's sweep, recorded as a `sweep` line; it also forgets sessions that can no longer matter. */
  const timerSweep = Effect.gen(function* () {
    const r = yield* sweep
    const now = yield* Clock.currentTimeMillis
    forgetQuietSessions(state, now)
    yield* trace.input({ at: now, type: "sweep", ...sweepFields(r) })
  })

  return { sweep, timerSweep, sweepFields }
}

/** The reaper (SPEC §8.1): one sweep at start, then one every `reapMs`, until interrupted (dispose). */
export const reaperLoop = (engine: { readonly timerSweep: Effect.Effect<void> }, reapMs: number): Effect.Effect<never> =>
  Effect.zipRight(engine.timerSweep, Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(reapMs)), engine.timerSweep)))
