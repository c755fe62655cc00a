/** Flag values of the sweeps (SPEC §11.1): parsed in the core, so that a bad value is one line and exit 2, never usage noise. */
import { Effect } from "effect"
import { parseNonNegative, parsePositiveInteger, type Parsed } from "../../core/retention/flags.js"
import { windowProblem } from "../../core/retention/window.js"
import { BadInput } from "../errors.js"

export const orBadInput = <A>(parsed: Parsed<A>): Effect.Effect<A, BadInput> =>
  parsed._tag === "Value" ? Effect.succeed(parsed.value) : Effect.fail(new BadInput({ message: parsed.message }))

/** A number from 0 to `max` (fractions allowed), or BadInput naming the flag. */
export const nonNegative = (flag: string, text: string | undefined, fallback: number, max: number): Effect.Effect<number, BadInput> =>
  orBadInput(parseNonNegative(flag, text, fallback, max))

/** An integer from 1 to Number.MAX_SAFE_INTEGER, or BadInput. */
export const positiveInteger = (flag: string, text: string | undefined): Effect.Effect<number | undefined, BadInput> => orBadInput(parsePositiveInteger(flag, text))

/** BadInput unless the window's cutoffs are dates (they are, for flags in range and a sane clock). */
export const validWindow = (now: number, days: number, graceHours: number): Effect.Effect<void, BadInput> => {
  const problem = windowProblem(now, days, graceHours)
  return problem === undefined ? Effect.void : Effect.fail(new BadInput({ message: problem }))
}
