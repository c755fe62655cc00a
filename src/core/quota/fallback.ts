/**
 * Fallback models for the primary session (issue 12, US-50), the decisions only: when a root
 * session's model runs out of quota, which fallback it continues on (each at most once per episode,
 * never looping), and which model a new user message runs on while the original cools. Pure; the trace
 * machine applies them (`switch` and `model` decisions) and the plugin's shell carries them out (abort,
 * wait until not busy, prompt "continue" on the fallback).
 */
import { isCooling, type CooldownTable } from "../pool/cooldown.js"
import type { LimitClass } from "../limits/classify.js"
import { validateEntries } from "../pool/pool.js"

/** One root session's quota episode: the model it was on, the fallback it runs on now, those used. */
export interface Episode {
  readonly original: string
  readonly active: string | undefined
  readonly tried: ReadonlyArray<string>
}

export interface Switch {
  readonly from: string
  readonly to: string
  /**
   * `abort` while opencode still retries; `idle` after an error it does not retry; `message` before a
   * request, when the model a user message names already cools (issue 35): nothing to abort or continue.
   */
  readonly via: "abort" | "idle" | "message"
}

/** `fallbackModels`: `provider/model` strings in order, validated like pool entries (duplicates and bad entries dropped, each with a warning). */
export const parseFallbackModels = (value: unknown): { readonly models: ReadonlyArray<string>; readonly warnings: ReadonlyArray<string> } => {
  if (value === undefined) return { models: [], warnings: [] }
  if (!Array.isArray(value)) return { models: [], warnings: ["option fallbackModels must be an array of provider/model strings; ignored"] }
  const r = validateEntries(
    value.map((model) => ({ model })),
    Number.MAX_SAFE_INTEGER
  )
  return { models: r._tag === "Usable" ? r.slots.map((s) => s.model) : [], warnings: r.warnings.map((w) => `option fallbackModels: ${w}`) }
}

/** Only running out triggers a switch: a context limit, bad credentials or an abort never do. */
export const switchesOn = (cls: LimitClass | undefined): boolean => cls === "quota" || cls === "rate_limit"

/**
 * A root session's model hit `cls`: the episode after it, and the switch to carry out, if any. The
 * next fallback is the first in order that is neither the failing model, nor tried in this episode,
 * nor cooling at `now`. None left: no switch (the episode is kept, so nothing loops).
 */
export const decideSwitch = (
  episode: Episode | undefined,
  signal: { readonly model: string; readonly cls: LimitClass | undefined; readonly via: Switch["via"] },
  fallbacks: ReadonlyArray<string>,
  cooldowns: CooldownTable,
  now: number
): { readonly episode: Episode | undefined; readonly switch?: Switch } => {
  if (!switchesOn(signal.cls) || fallbacks.length === 0) return { episode }
  // a signal from a model outside this episode (neither its original nor a fallback it tried) starts a new one
  const current: Episode =
    episode !== undefined && (signal.model === episode.original || episode.tried.includes(signal.model)) ? episode : { original: signal.model, active: undefined, tried: [] }
  // a late signal from a model the session already left (opencode reports one error twice) switches nothing
  if (current.active !== undefined && signal.model !== current.active) return { episode: current }
  const used = new Set([current.original, ...current.tried])
  const to = fallbacks.find((m) => !used.has(m) && m !== signal.model && !isCooling(cooldowns.get(m), now))
  if (to === undefined) return { episode: current }
  return { episode: { ...current, active: to, tried: [...current.tried, to] }, switch: { from: signal.model, to, via: signal.via } }
}

/**
 * The model a new user message of the session runs on: a message that names the episode's original
 * model while it cools runs on the active fallback; once the original recovers, the message keeps it
 * and the episode ends.
 */
export const messageModel = (
  episode: Episode | undefined,
  requested: string,
  cooldowns: CooldownTable,
  now: number
): { readonly model: string; readonly episode: Episode | undefined } => {
  if (episode === undefined || episode.active === undefined || requested !== episode.original) return { model: requested, episode }
  if (isCooling(cooldowns.get(episode.original), now)) return { model: episode.active, episode }
  return { model: requested, episode: undefined }
}
