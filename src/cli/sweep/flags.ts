/** Flag values of the sweeps (SPEC §11.1): parsed in the core, so that a bad value is one line and exit 2, never usage noise. */
import { Clock, Effect, Option } from "effect"
import { parseNonNegative, parsePositiveInteger } from "../../core/retention/flags.js"
import { MAX_DAYS, MAX_GRACE_HOURS, windowProblem } from "../../core/retention/window.js"
import { BadInput } from "../errors.js"
import { orBadInput } from "../shared/flags.js"

export interface WindowFlags {
  readonly days: Option.Option<string>
  readonly graceHours: Option.Option<string>
  readonly limit: Option.Option<string>
}

/**
 * `--days` and `--grace-hours` (0 to their maximum, fractions allowed, else the sweep's defaults) and
 * `--limit` (an integer from 1 to Number.MAX_SAFE_INTEGER), or BadInput naming the flag; BadInput
 * too unless the window's cutoffs are dates (they are, for flags in range and a sane clock).
 */
export const sweepWindow = (args: WindowFlags, defaults: { readonly days: number; readonly graceHours: number }) =>
  Effect.gen(function* () {
    const days = yield* orBadInput(parseNonNegative("days", Option.getOrUndefined(args.days), defaults.days, MAX_DAYS))
    const graceHours = yield* orBadInput(parseNonNegative("grace-hours", Option.getOrUndefined(args.graceHours), defaults.graceHours, MAX_GRACE_HOURS))
    const limit = yield* orBadInput(parsePositiveInteger("limit", Option.getOrUndefined(args.limit)))
    const problem = windowProblem(yield* Clock.currentTimeMillis, days, graceHours)
    if (problem !== undefined) return yield* new BadInput({ message: problem })
    return { days, graceHours, limit }
  })
