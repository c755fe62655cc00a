/**
 * Cooldowns by hand (issue 32): what `ocpool cool` lists, what `ocpool cool clear` ends and what
 * `ocpool cool set` benches, as commits of the shared-state port. Pure: the shell reads the table,
 * passes `now`, and writes the commit in one transaction.
 *
 * Ending a cooldown writes a marker (source `cleared`, `until` the moment it was cleared, `ended` the
 * `until` it ended): every process's own record of the model that began before it ends too at its next
 * decision (core/pool/cooldown.ts `mergeCleared`), and the marker is kept as long as what it ended would
 * have been. The strikes stay unless `--reset-strikes` (then 0), so a model that limits again at once
 * escalates as before.
 */
import { isCleared, isCooling, type Cooldown, type CooldownTable } from "../pool/cooldown.js"
import { NOTE_MAX } from "../pool/cooldownFile.js"

/** Which cooling models `clear` ends. */
export type ClearSelector =
  | { readonly _tag: "Models"; readonly models: ReadonlyArray<string> }
  | { readonly _tag: "Provider"; readonly provider: string }
  | { readonly _tag: "All" }

/** What the table holds that cools at `now` (markers and records over left out), by model. */
export const coolingNow = (table: CooldownTable, now: number): ReadonlyArray<Cooldown> =>
  [...table.values()].filter((c) => !isCleared(c) && isCooling(c, now)).sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0))

const providerOf = (model: string): string => model.slice(0, Math.max(0, model.indexOf("/")))

export interface ClearPlan {
  /** The cooldowns it ends, as they were. */
  readonly cleared: ReadonlyArray<Cooldown>
  /** Models named that were not cooling. */
  readonly notCooling: ReadonlyArray<string>
  /** The markers to write (the port's `cool`). */
  readonly markers: ReadonlyArray<Cooldown>
}

/** Ends the cooldowns `selector` names at `now`; `resetStrikes`: their strikes go to 0. */
export const planClear = (table: CooldownTable, selector: ClearSelector, resetStrikes: boolean, now: number): ClearPlan => {
  const cooling = coolingNow(table, now)
  const named = selector._tag === "Models" ? new Set(selector.models) : undefined
  const cleared = cooling.filter((c) => (selector._tag === "All" ? true : selector._tag === "Provider" ? providerOf(c.model) === selector.provider : named!.has(c.model)))
  const notCooling = selector._tag === "Models" ? [...new Set(selector.models)].filter((m) => !cleared.some((c) => c.model === m)) : []
  const markers = cleared.map(
    (c): Cooldown => ({ model: c.model, reason: c.reason, strikes: resetStrikes ? 0 : c.strikes, scope: c.scope, since: now, until: now, source: "cleared", ended: c.until })
  )
  return { cleared, notCooling, markers }
}

/** A model benched by hand for `ms` from `now` (`ocpool cool set`); the strikes it had are kept. */
export const benchCooldown = (table: CooldownTable, model: string, ms: number, note: string | undefined, now: number): Cooldown => {
  const old = table.get(model)
  const text = note?.trim()
  return {
    model,
    reason: "manual",
    strikes: old?.strikes ?? 0,
    scope: "model",
    since: now,
    until: now + ms,
    source: "manual",
    ...(text !== undefined && text !== "" ? { note: text.slice(0, NOTE_MAX) } : {})
  }
}

/** A model name as `ocpool cool` accepts it: `provider/model`, no control characters, at most 256 characters; else why not. */
export const checkModel = (model: string): string | undefined => {
  if (model.length > 256) return "longer than 256 characters"
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(model)) return "holds control characters"
  if (!/^[^/\s]+\/\S+$/.test(model)) return "not provider/model"
  return undefined
}
