/**
 * The numeric flags of the sweeps (SPEC §11.1), parsed from their text: a value or a one-line problem
 * naming the flag. Pure: the CLI turns a problem into exit 2.
 */

export type Parsed<A> = { readonly _tag: "Value"; readonly value: A } | { readonly _tag: "Problem"; readonly message: string }

export const value = <A>(a: A): Parsed<A> => ({ _tag: "Value", value: a })
export const problem = <A>(message: string): Parsed<A> => ({ _tag: "Problem", message })

/** Values echoed in a message: control characters escaped, at most 40 code points, so a hostile value cannot paint the terminal. */
export const shownValue = (text: string): string => {
  const points = [...text]
  const cut = points.length > 40 ? [...points.slice(0, 40), "…"] : points
  // eslint-disable-next-line no-control-regex
  return cut.join("").replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
}

const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/
const INTEGER = /^\s*\+?\d+\s*$/
/** Longer values are refused before any pattern runs on them (no number needs more). */
export const FLAG_TEXT_MAX = 64

/** A decimal number from 0 to `max` (fractions allowed); absent, the fallback. */
export const parseNonNegative = (flag: string, text: string | undefined, fallback: number, max: number): Parsed<number> => {
  if (text === undefined) return value(fallback)
  const n = text.length <= FLAG_TEXT_MAX && DECIMAL.test(text) ? Number(text) : Number.NaN
  if (Number.isNaN(n) || n < 0) return problem(`--${flag} must be a number ≥ 0, got '${shownValue(text)}'`)
  if (!(n <= max)) return problem(`--${flag} must be at most ${max}, got '${shownValue(text)}'`)
  // `-0` is 0.
  return value(n + 0)
}

/** An integer from 1 to Number.MAX_SAFE_INTEGER; absent, undefined. */
export const parsePositiveInteger = (flag: string, text: string | undefined): Parsed<number | undefined> => {
  if (text === undefined) return value(undefined)
  const n = text.length <= FLAG_TEXT_MAX && INTEGER.test(text) ? Number(text) : Number.NaN
  if (Number.isNaN(n) || n < 1) return problem(`--${flag} must be an integer ≥ 1, got '${shownValue(text)}'`)
  if (!Number.isSafeInteger(n)) return problem(`--${flag} must be at most ${Number.MAX_SAFE_INTEGER}, got '${shownValue(text)}'`)
  return value(n)
}
