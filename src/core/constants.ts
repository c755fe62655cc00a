/** The constants of SPEC §1 that the pure core needs. Times are milliseconds. */
export const POOLED_BASES = ["explore", "implement", "context"] as const
export type Base = (typeof POOLED_BASES)[number]

export const MAX_SLOTS_DEFAULT = 4
export const MAX_SLOTS_LIMIT = 8
export const WEIGHT_MAX = 100
export const CAP_FACTOR = 2

export const CLAIM_TTL_MS = 600_000
export const DEAD_FILE_MS = 1_200_000
/**
 * How long a permit step waits for a fleet's PostgreSQL before it is made on this host's state
 * database (issue 21, 22). On that database a permit step waits as long as it takes (issue 32).
 */
export const PERMITS_LOCK_WAIT_MS = 10_000

export const HUNG_MIN_AGE_MS = 300_000
export const HUNG_SILENCE_MS = 180_000
/** A bound child that streamed no first token this long after its spawn is aborted (issue 35; option `firstTokenMs`). */
export const FIRST_TOKEN_MS = 90_000
/** The first-token misses in a row on one model that cool it (`hang`): the second. */
export const FIRST_TOKEN_STRIKES = 2
export const MAX_ABORT_ATTEMPTS = 3

export const STRIKE_WINDOWS_MS = [60_000, 120_000, 240_000, 480_000, 900_000] as const
export const STRIKE_DECAY_MS = 1_800_000
/** An account out of credit (issue 19): 1 h, 3 h, 6 h, then 12 h per strike, unless a reset is stated. */
export const CREDIT_WINDOWS_MS = [3_600_000, 10_800_000, 21_600_000, 43_200_000] as const
export const STATED_RESET_MAX_MS = 604_800_000
/**
 * Issue 35: a plan's or free tier's quota whose body states a reset further than 7 days (a monthly plan:
 * `It will reset in 10 days 19 hours`) cools for STATED_RESET_MAX_MS, with one warning naming the stated
 * date, when the stated reset is at most this far (31 days: a month). Beyond it, or on any other class or
 * source, a reset over 7 days stays absent (issue 18).
 */
export const STATED_RESET_LONG_MAX_MS = 2_678_400_000
/** No cooldown is shorter than this (issue 19): a stated reset under a second counts as one second. */
export const COOL_WINDOW_MIN_MS = 1_000
export const BREAKER_NEXT_MS = 60_000

export const OUTAGE_COOLDOWN_MS = 30_000
export const HANG_COOLDOWN_MS = 600_000
export const AUTH_COOLDOWN_MS = 900_000
/** Issue 35: a free tier refused to this client (opencode's `FreeTierError`) cools its provider this long, flat, no strikes. */
export const ENTITLEMENT_COOLDOWN_MS = 3_600_000
export const UNAVAILABLE_COOLDOWN_MS = 21_600_000
/** Quota sensing (issue 12): a slot whose remaining requests or tokens fall to this fraction of the limit cools as `quota_low`. */
export const QUOTA_RESERVE_DEFAULT = 0.02
/** `quota_low` without a stated reset cools this long. */
export const QUOTA_LOW_WINDOW_MS = 60_000

/** Error text longer than this is cut before classification (SPEC §7.1: responseBody's first 2 KB). */
export const BODY_TEXT_MAX = 2048

/**
 * opencode's own hidden agents, which run under the user's root session (the title generator, the
 * summary and the compaction): their requests say nothing about the model and agent the user works with.
 */
export const OPENCODE_HIDDEN_AGENTS: ReadonlySet<string> = new Set(["title", "summary", "compaction"])

/** `explore-2`, `implement-12`: a hand-named slot variant (SPEC §6.3). `explore-0` does not match. */
export const VARIANT_PATTERN = /^(explore|implement|context)-([1-9][0-9]*)$/

/** Retention sweeps (SPEC §1, §11). */
export const DAY_MS = 86_400_000
export const HOUR_MS = 3_600_000
export const SESSION_SWEEP_DAYS = 30
export const SESSION_SWEEP_GRACE_HOURS = 24
export const EVENT_SWEEP_DAYS = 7
export const EVENT_SWEEP_GRACE_HOURS = 1
/** The time field of an opencode id keeps 36 bits of milliseconds and wraps after this long (≈ 795.36 days). */
export const ID_ERA_MS = 68_719_476_736
export const EVENT_CHUNK_ROWS = 1_000
export const EVENT_CHUNK_MIN_ROWS = 50
/** A write transaction longer than this halves the next chunk; ten shorter ones in a row double it back. */
export const SLOW_TRANSACTION_MS = 100
export const FAST_TRANSACTIONS_TO_GROW = 10
export const DB_BUSY_TIMEOUT_MS = 5_000
/** Back-off after SQLITE_BUSY: one wait per retry, then the sweep stops with exit 75. */
export const DB_BUSY_BACKOFF_MS = [250, 500, 1_000, 2_000, 4_000] as const
/** The id guard checks this many candidates that have a session row (SPEC §11.2). */
export const ID_GUARD_SAMPLES = 100
export const ID_GUARD_SLACK_MS = 86_400_000
/** After another connection wrote within this window, each chunk is followed by a short pause (SPEC §1: opencode is never blocked long). */
export const POLITE_WINDOW_MS = 2_000
export const POLITE_PAUSE_MS = 5
/** A passive WAL checkpoint after every this many chunks (about SQLite's own 1000-page automatic checkpoint). */
export const CHECKPOINT_EVERY_CHUNKS = 8
/** `sweep events` holds at most this many candidates in memory (about 400 B each); more take further rounds, each with a fresh scan. */
export const EVENT_ROUND_CANDIDATES = 1_000_000
