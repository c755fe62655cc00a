/**
 * The trace machine's quota rules (issues 12 and 35): a root session's fallback switch, after a signal
 * or before a request, and a model group's learned budget from a `budget` line. Pure; the machine
 * (machine.ts) calls them on its draft.
 */
import { QUOTA_RESERVE_DEFAULT } from "../constants.js"
import { countSuccess, groupOf, inGroup, learnLimit, learnedQuota } from "../limits/learned.js"
import { applyCool, isCooling, type CoolPlan, type SignalDecision } from "../pool/cooldown.js"
import { isLow } from "../quota/low.js"
import { decideSwitch, switchesOn, type Episode } from "../quota/fallback.js"
import { withNewest } from "../newest.js"
import { emit, emitCool, type Draft } from "./draft.js"
import type { TraceInput } from "./input.js"

/** How many root sessions' fallback episodes are remembered; the oldest is forgotten first. */
export const EPISODES_MAX = 500

/**
 * A `budget` line (issue 35): the group's shared record counts the success or learns from the 429; the
 * record is decided (the commit writes it), and a group at its reserve cools every slot of the group
 * as `quota_low` from a learned source until its window ends, as a stated quota at its reserve does.
 */
export const learnBudget = (d: Draft, input: Extract<TraceInput, { type: "budget" }>): void => {
  const at = d.at
  const group = groupOf(input.model)
  const record = input.outcome === "ok" ? countSuccess(input.learned, group, at) : learnLimit(input.learned, group, at, input.resetAt)
  const quota = learnedQuota(record, at)
  const learned = input.outcome === "limit" && record.limits.some((l) => l.learnedAt === at)
  emit(d, { type: "budget", at, record, ...(quota === undefined ? {} : { quota }), learned })
  if (quota === undefined || !isLow(quota, input.reserve ?? QUOTA_RESERVE_DEFAULT) || quota.resetAt <= at) return
  const models = d.slots.filter((s) => inGroup(group, s.model)).map((s) => s.model)
  const plan: CoolPlan = { models, scope: "model", reason: "quota_low", strike: 0, windowMs: quota.resetAt - at, source: "learned", until: quota.resetAt }
  if (applyCool(d.cooldowns, plan, at) !== d.cooldowns) emitCool(d, plan)
}

/**
 * A user message of a root session on a model that cools, with no episode running it on a fallback
 * (issue 35): the switch to the next fallback before the request, as a signal's switch would decide it
 * after the 429 (`via: "message"`: nothing to abort or continue; the message runs on the fallback).
 */
export const switchBeforeSending = (d: Draft, episodes: ReadonlyMap<string, Episode>, fallbacks: ReadonlyArray<string>, session: string, model: string): ReadonlyMap<string, Episode> => {
  const episode = episodes.get(session)
  const record = d.cooldowns.get(model)
  if (fallbacks.length === 0 || (episode?.active !== undefined && episode.original === model) || !isCooling(record, d.at)) return episodes
  const r = decideSwitch(episode, { model, cls: record!.reason === "quota" ? "quota" : "rate_limit", via: "message" }, fallbacks, d.cooldowns, d.at)
  if (r.switch === undefined || r.episode === undefined) return episodes
  emit(d, { type: "switch", at: d.at, session, from: model, to: r.switch.to, via: "message", until: record!.until })
  return withNewest(episodes, session, r.episode, EPISODES_MAX)
}

/** A root session's signal (US-50): when its model ran out, the switch to the next fallback. */
export const fallBack = (
  d: Draft,
  episodes: ReadonlyMap<string, Episode>,
  fallbacks: ReadonlyArray<string>,
  session: string,
  model: string,
  decision: SignalDecision,
  via: "abort" | "idle"
): ReadonlyMap<string, Episode> => {
  if (decision._tag !== "Cool" || !switchesOn(decision.cls)) return episodes
  const before = episodes.get(session)
  const r = decideSwitch(before, { model, cls: decision.cls, via }, fallbacks, d.cooldowns, d.at)
  if (r.switch !== undefined) {
    const until = d.cooldowns.get(model)?.until ?? d.at
    emit(d, { type: "switch", at: d.at, session, from: r.switch.from, to: r.switch.to, via, until })
  }
  if (r.episode === before || r.episode === undefined) return episodes
  return withNewest(episodes, session, r.episode, EPISODES_MAX)
}
