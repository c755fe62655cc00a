/** Flag values of the sweeps (SPEC §11.1): parsed here so that a bad value is one line and exit 2, never usage noise. */
import { Effect } from "effect"
import { BadInput } from "../errors.js"

/** A number ≥ 0 (fractions allowed), or BadInput naming the flag. */
export const nonNegative = (flag: string, text: string | undefined, fallback: number): Effect.Effect<number, BadInput> => {
  if (text === undefined) return Effect.succeed(fallback)
  const value = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(text) ? Number(text) : Number.NaN
  return Number.isFinite(value) && value >= 0 ? Effect.succeed(value) : Effect.fail(new BadInput({ message: `--${flag} must be a number ≥ 0, got '${text}'` }))
}

/** An integer ≥ 1, or BadInput. */
export const positiveInteger = (flag: string, text: string | undefined): Effect.Effect<number | undefined, BadInput> => {
  if (text === undefined) return Effect.succeed(undefined)
  const value = /^\s*\+?\d+\s*$/.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(value) && value >= 1 ? Effect.succeed(value) : Effect.fail(new BadInput({ message: `--${flag} must be an integer ≥ 1, got '${text}'` }))
}
