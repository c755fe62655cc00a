/**
 * A hand-named slot variant (SPEC §6.3): `explore-2` asked for by name is refused, and the task call
 * fails with the base to spawn instead. Pure: what `tool.execute.before` does with a `task` call before
 * and after the engine sees it.
 */
import { VARIANT_PATTERN } from "../constants.js"

/** The name asked for and the base to spawn instead. */
export interface HandNamed {
  readonly requested: string
  readonly base: string
}

/** The hand-named variant an agent name is, or `undefined` (a base, `explore-0`, any other agent). */
export const handNamedVariant = (agent: string): HandNamed | undefined => {
  const m = VARIANT_PATTERN.exec(agent)
  return m === null ? undefined : { requested: agent, base: m[1]! }
}

/** The log line of a refusal (a warning). */
export const refusalLine = (r: HandNamed): string => `refused manual variant ${r.requested}; spawn ${r.base}`

/**
 * What `tool.execute.before` does with a `task` call of `session` and `call` (undefined: unreadable):
 * - `pass`: an id cannot be read and it names no variant; opencode runs it unchanged;
 * - `refuse`: an id cannot be read, so the engine never sees it, and it names a variant: refused here,
 *   logged with `log` (the engine logs its own refusals);
 * - `engine`: the engine routes or refuses it; `refusal`, when it names a variant, fails the call even
 *   when the engine failed before it could say so (no hostile input can suppress the refusal).
 */
export type SpawnGate =
  | { readonly _tag: "pass" }
  | { readonly _tag: "refuse"; readonly refusal: HandNamed; readonly log: string }
  | { readonly _tag: "engine"; readonly session: string; readonly call: string; readonly refusal: HandNamed | undefined }

export const spawnGate = (agent: string, session: string | undefined, call: string | undefined): SpawnGate => {
  const refusal = handNamedVariant(agent)
  if (session !== undefined && call !== undefined) return { _tag: "engine", session, call, refusal }
  return refusal === undefined ? { _tag: "pass" } : { _tag: "refuse", refusal, log: refusalLine(refusal) }
}
