/** What the plugin follows of sessions (SPEC §6.4, §8.2, §8.5): activity, children, asks, ends, spinning. */
import { Clock, Effect } from "effect"
import { updateClaim } from "../core/claims.js"
import { VARIANT_PATTERN } from "../core/constants.js"
import type { Context } from "./context.js"
import { ACTIVITY_SAMPLE_MS, CHILD_RING, SPIN_REQUESTS, SPIN_WINDOW_MS } from "./state.js"

export const makeSessions = (ctx: Context, spawns: { readonly bind: (key: string, session: string, activity: boolean) => Effect.Effect<void>; readonly release: (key: string, ok: boolean) => Effect.Effect<void> }) => {
  const { state, log, trace, locked, publish, setClaims, liveTarget, abortClaim } = ctx
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
      if (match !== undefined) yield* spawns.bind(match.key, id, true)
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
      if (c !== undefined && !state.aborting.has(c.key)) yield* spawns.release(c.key, true)
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

  return { activity, answered, childCreated, ask, idle, modelRequest, markBusy, output }
}
