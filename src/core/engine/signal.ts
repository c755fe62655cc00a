/**
 * Limit signals (SPEC §7): a session's error, a provider's failed response and the retry status
 * opencode publishes after it become `limit` and `retry` lines; the machine classifies and cools
 * (reading and writing the shared cooldowns) and aborts the pooled target. Here: reading the error,
 * the dedupe, joining a failed response to its retry, and the one-time warnings (out of credit,
 * rejected credentials, a model unavailable).
 */
import { classifyError, type Verdict } from "../limits/classify.js"
import type { ResetSource } from "../limits/reset.js"
import { withNewest } from "../newest.js"
import { providerOf, resetOf } from "../pool/cooldown.js"
import { getClaim } from "../trace/claimTable.js"
import type { Decision } from "../trace/decision.js"
import type { TraceInput } from "../trace/input.js"
import { clockTime, clockTimeFrom } from "../time.js"
import { FAILURE_MATCH_MS, FAILURES_MAX, SIGNAL_DEDUPE_MS } from "./state.js"
import { endTask } from "./claimSteps.js"
import { noteRefreshError } from "./context.js"
import { local, NONE, TRANSACT, type Handlers, type Turn } from "./turn.js"
import { isChild } from "../session/tree.js"
import { isRefreshSession } from "./refreshSessions.js"

/**
 * `primary` for a signal line: the root session's model (as the fallback feature keeps it, fallback.ts),
 * when fallbacks are configured and nothing pooled targets it.
 */
const primaryOf = (turn: Turn, session: string): { readonly primary?: string } => {
  if (turn.machine.fallbacks.length === 0 || isChild(turn.state, session) || isRefreshSession(turn.state, session) || turn.liveTarget(session) !== undefined) return {}
  const model = turn.state.primaries.get(session)?.model
  return model === undefined ? {} : { primary: model }
}

/** What the error of a session event carries, as far as it is read. */
type ErrorShape = { readonly name?: unknown; readonly data?: Record<string, unknown> }
const errorShape = (error: unknown): ErrorShape => (typeof error === "object" && error !== null ? error : {}) as ErrorShape

/** An error as a short reason: its name and message (`APIError: Bad Request`), at most 160 characters. */
const errorReason = (e: ErrorShape): string => {
  const name = typeof e.name === "string" ? e.name : "an error"
  const message = typeof e.data?.message === "string" ? e.data.message.replace(/\s+/g, " ").trim() : ""
  const text = message === "" ? name : `${name}: ${message}`
  return text.length > 160 ? `${text.slice(0, 159)}…` : text
}

/** An abort of the session (opencode's own or ours) is no signal: it only ends the task, never a success. */
const isAbort = (error: unknown): boolean => errorShape(error).name === "MessageAbortedError"

/**
 * The verdict on a `limit` or `retry` line (issues 19, 35), attributed as the machine attributes it: the
 * line's model, else `model` (the live claim's, or the primary's). Read only for the one-time warnings.
 */
const verdictOf = (line: TraceInput, model: string | undefined): Verdict | undefined => {
  if (line.type === "limit") return classifyError({ text: line.text, status: line.status, headers: line.headers, body: line.body, model: line.model ?? model, provider: line.provider })
  if (line.type === "retry") return classifyError({ text: line.message, status: line.status, headers: line.headers, body: line.body, model, provider: line.provider })
  return undefined
}

type Cool = Extract<Decision, { type: "cool" }>

/** The models of a cooling, named in a warning: `a, b` or `a, b and 3 more`. */
const namesOf = (models: ReadonlyArray<string>): string => (models.length <= 3 ? models.join(", ") : `${models.slice(0, 3).join(", ")} and ${models.length - 3} more`)

/** The latest end among the cooled models (the cooling may have merged into a longer one). */
const latestEnd = (turn: Turn, cool: Cool): number => Math.max(cool.until, ...cool.models.map((m) => turn.machine.cooldowns.get(m)?.until ?? 0))

/** Out of credit (issue 19): the provider's account, or (issue 35) the account of the upstream a gateway relayed. */
const creditWarning = (turn: Turn, cool: Cool, v: Verdict): void => {
  const provider = providerOf(cool.models[0]!)
  const until = latestEnd(turn, cool)
  if (v.scope === "upstream" && v.view.upstream !== undefined) {
    const upstream = v.view.upstream.replace(/\s+/g, " ").trim().slice(0, 60)
    if (!warnOnce(turn, `credit:${provider}:${upstream.toLowerCase()}`, until)) return
    turn.log("warn", `upstream ${upstream} behind provider ${provider} is out of credit; ${namesOf(cool.models)} cool until you top up there or ${clockTimeFrom(until, turn.at)} (the provider's other models still route)`)
    return
  }
  if (cool.scope !== "provider" || !warnOnce(turn, `credit:${provider}`, until)) return
  turn.log("warn", `provider ${provider} is out of credit; its slots cool until you top up or ${clockTimeFrom(until, turn.at)}`)
}

/** Issue 35: a stated reset beyond 7 days cools for the 7-day cap; the warning names the date the provider stated. */
const longResetWarning = (turn: Turn, cool: Cool, line: TraceInput, v: Verdict): void => {
  const stated = resetOf(v, turn.at, line.type === "retry" ? line.next : undefined)?.statedMs
  if (stated === undefined) return
  const who = cool.scope === "provider" ? `provider ${providerOf(cool.models[0]!)}` : `model ${cool.models[0]}`
  if (!warnOnce(turn, `reset:${cool.scope === "provider" ? providerOf(cool.models[0]!) : cool.models[0]}`, cool.until)) return
  const days = Math.round(stated / 86_400_000)
  turn.log(
    "warn",
    `${who} stated its limit resets ${clockTimeFrom(turn.at + stated, turn.at)} (${days} days away); ${namesOf(cool.models)} cool until ${clockTimeFrom(cool.until, turn.at)}, the 7-day cap, and are tried once then`
  )
}

/** Issue 35: a free tier refused to this client cools its provider for pooled work, flat; one warning says what to do. */
const entitlementWarning = (turn: Turn, cool: Cool, v: Verdict | undefined): void => {
  const provider = providerOf(cool.models[0]!)
  if (!warnOnce(turn, `entitlement:${provider}`, cool.until)) return
  const line = (v?.view.messages ?? "").split("\n").find((m) => /free tier/i.test(m)) ?? "free tier refused"
  const said = line.replace(/^Error from provider \([^)]{0,40}\):\s*/, "")
  turn.log(
    "warn",
    `provider ${provider} refused its free tier to pooled work ("${said.slice(0, 80)}"); ${cool.models.length} slot(s) cool until ${clockTime(cool.until)}: update opencode, or give ${provider} a paid key (or credit), then \`ocpool cool clear --provider ${provider}\``
  )
}

/** Signal dedupe (SPEC §7.1): the same text on the same session within SIGNAL_DEDUPE_MS is dropped. */
const firstSignal = (turn: Turn, session: string, text: string): boolean => {
  const key = `${session}\u0000${text}`
  const last = turn.state.signals.get(key)
  if (last !== undefined && turn.at - last < SIGNAL_DEDUPE_MS) return false
  turn.put("signals", key, turn.at)
  return true
}

/** The sources of a cooldown that a provider stated (a reset it said), as opposed to a backoff the pool chose. */
const STATED: ReadonlySet<string> = new Set<ResetSource>(["detail", "body", "text", "header", "retry", "day"])

/**
 * What a rate-limit or quota cooling teaches its models' groups (issue 35), as a `Learn` effect: learned
 * in a turn of its own once this one's cooldown is written (core/engine/budget.ts).
 */
const learnLater = (turn: Turn, decisions: ReadonlyArray<Decision>): void => {
  for (const d of decisions) {
    if (d.type !== "cool" || (d.reason !== "rate_limit" && d.reason !== "quota")) continue
    const source = turn.machine.cooldowns.get(d.models[0]!)?.source
    turn.effect(source !== undefined && STATED.has(source) ? { _tag: "Learn", models: d.models, resetAt: d.until } : { _tag: "Learn", models: d.models })
  }
}

/** Warns once until `until` under `key` (a provider or model); false when already warned. */
const warnOnce = (turn: Turn, key: string, until: number): boolean => {
  if ((turn.state.warnedUntil.get(key) ?? 0) > turn.at) return false
  turn.put("warnedUntil", key, until)
  return true
}

/** A classified signal's line: cool, abort the pooled target (pending), one-time warnings. */
const signal = (turn: Turn, line: TraceInput, session: string, text: string): void => {
  const target = turn.liveTarget(session)
  const decisions = turn.apply(line)
  learnLater(turn, decisions)
  const cool = decisions.find((d): d is Extract<Decision, { type: "cool" }> => d.type === "cool")
  if (cool === undefined) return
  if (target !== undefined && getClaim(turn.machine.table, target.key) !== undefined) {
    turn.put("signalled", target.key, cool.reason)
  }
  const primary = "primary" in line ? line.primary : undefined
  if (cool.reason === "quota" || cool.reason === "entitlement") {
    const v = verdictOf(line, target?.model ?? primary)
    if (cool.reason === "entitlement") return entitlementWarning(turn, cool, v)
    if (v === undefined) return
    if (v.credit) return creditWarning(turn, cool, v)
    return longResetWarning(turn, cool, line, v)
  }
  if (cool.reason !== "unavailable" && cool.reason !== "auth") return
  const key = cool.reason === "auth" ? `auth:${providerOf(cool.models[0]!)}` : `unavailable:${cool.models[0]}`
  if (!warnOnce(turn, key, cool.until)) return
  turn.log(
    "warn",
    cool.reason === "auth"
      ? `provider ${providerOf(cool.models[0]!)} rejected its credentials; ${cool.models.length} slot(s) cool for 15m`
      : `model ${cool.models[0]} unavailable ("${text.slice(0, 80)}"); not routed until ${clockTime(cool.until)}`
  )
}

export const signalHandlers: Handlers<"error" | "failed" | "retry"> = {
  error: {
    // the dedupe depends on the time, so every error but an abort declares the shared state
    needs: (_state, event) => (isAbort(event.error) ? NONE : TRANSACT),
    run: (turn, event) => {
      const e = errorShape(event.error)
      noteRefreshError(turn, event.session, errorReason(e))
      if (isAbort(event.error)) {
        const c = turn.liveTarget(event.session)
        if (c !== undefined) endTask(turn, c.key, false)
        return
      }
      const text = JSON.stringify(event.error ?? null)
      if (!firstSignal(turn, event.session, text)) return
      const status = typeof e.data?.statusCode === "number" ? e.data.statusCode : undefined
      const headers = typeof e.data?.responseHeaders === "object" && e.data.responseHeaders !== null ? (e.data.responseHeaders as Record<string, unknown>) : undefined
      const metadata = e.data?.metadata as { provider?: unknown } | undefined
      const provider = typeof metadata?.provider === "string" ? metadata.provider : undefined
      signal(
        turn,
        {
          at: turn.at,
          type: "limit",
          text,
          ...(status === undefined ? {} : { status }),
          ...(headers === undefined ? {} : { headers }),
          ...(event.model === undefined ? {} : { model: event.model }),
          ...(provider === undefined ? {} : { provider }),
          session: event.session,
          ...primaryOf(turn, event.session),
          abort: "pending",
          ...turn.shared()
        } as TraceInput,
        event.session,
        text
      )
    }
  },
  failed: local((turn, event) => {
    turn.set("failures", withNewest(turn.state.failures, event.session, { at: turn.at, status: event.status, headers: event.headers, body: event.body }, FAILURES_MAX))
  }),
  retry: {
    needs: () => TRANSACT,
    run: (turn, event) => {
      const at = turn.at
      if (!firstSignal(turn, event.session, event.message)) return
      const seen = turn.state.failures.get(event.session)
      const failure = seen !== undefined && at - seen.at <= FAILURE_MATCH_MS ? seen : undefined
      if (seen !== undefined) {
        const failures = new Map(turn.state.failures)
        failures.delete(event.session)
        turn.set("failures", failures)
      }
      signal(
        turn,
        {
          at,
          type: "retry",
          session: event.session,
          message: event.message,
          next: event.next,
          ...(event.provider === undefined ? {} : { provider: event.provider }),
          ...(failure === undefined ? {} : { status: failure.status, headers: failure.headers, body: failure.body }),
          ...primaryOf(turn, event.session),
          abort: "pending",
          ...turn.shared()
        } as TraceInput,
        event.session,
        event.message
      )
    }
  }
}
