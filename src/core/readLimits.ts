/**
 * Caps on what is read from files (docs/OPERATIONS.md "Limits"). Each is far above anything a real
 * file reaches; a file beyond one is refused with a one-line reason instead of being read whole.
 * Pure.
 */

/** A pool file (`pool.txt`, `pool.json`, `--pool`, `modelsFile`): a real one is a few hundred bytes. */
export const POOL_FILE_MAX_BYTES = 1 << 20

/**
 * A claim, cooldown or lock file in the state directory. A claim is ~300 bytes and a real claim file
 * holds a few dozen; this cap (about 3,500 claims) is above what 8 slots of weight 100 could hold.
 */
export const STATE_FILE_MAX_BYTES = 1 << 20

/** One line of a trace or of an `--expect` decisions file, in UTF-16 code units (a real line is under 4 KiB). */
export const LINE_MAX_CHARS = 1 << 20

/** JSON nesting deeper than this (arrays and objects) is refused before it is parsed; real files nest 4 levels at most. */
export const JSON_MAX_DEPTH = 64

/** The largest epoch-ms time a JavaScript date can show: ±8.64e15 (100 000 000 days around 1970). */
export const TIME_MAX_MS = 8.64e15

/**
 * The largest time a trace line may carry (`at`, a retry's `next`, a peer cooldown's `until`): half
 * the date range, so that any window the rules add to it (a stated reset is capped at 7 days, a
 * retry window is `next` − `at`) still lands on a date the explanation can show.
 */
export const TRACE_TIME_MAX_MS = TIME_MAX_MS / 2

/** A value echoed in an error or warning line is cut to this many characters (plus `…`). */
export const ECHO_MAX_CHARS = 80

/** An epoch-ms time that a date can show. */
export const isEpochMs = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && Math.abs(n) <= TIME_MAX_MS
