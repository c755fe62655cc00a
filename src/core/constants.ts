/** The constants of SPEC §1 that the pure core needs. Times are milliseconds. */
export const POOLED_BASES = ["explore", "implement", "context"] as const
export type Base = (typeof POOLED_BASES)[number]

export const MAX_SLOTS_DEFAULT = 4
export const MAX_SLOTS_LIMIT = 8
export const WEIGHT_MAX = 100
export const CAP_FACTOR = 2

export const CLAIM_TTL_MS = 600_000
export const DEAD_FILE_MS = 1_200_000
export const ORPHAN_TMP_MS = 60_000
export const LOCK_STALE_MS = 5_000

export const HUNG_MIN_AGE_MS = 300_000
export const HUNG_SILENCE_MS = 180_000
export const MAX_ABORT_ATTEMPTS = 3

export const STRIKE_WINDOWS_MS = [60_000, 120_000, 240_000, 480_000, 900_000] as const
export const STRIKE_DECAY_MS = 1_800_000
export const STATED_RESET_MAX_MS = 604_800_000
export const BREAKER_NEXT_MS = 60_000

export const OUTAGE_COOLDOWN_MS = 30_000
export const HANG_COOLDOWN_MS = 600_000
export const AUTH_COOLDOWN_MS = 900_000
export const UNAVAILABLE_COOLDOWN_MS = 21_600_000

/** Error text longer than this is cut before classification (SPEC §7.1: responseBody's first 2 KB). */
export const BODY_TEXT_MAX = 2048

export const isPooledBase = (name: string): name is Base =>
  name === "explore" || name === "implement" || name === "context"

/** `explore-2`, `implement-12`: a hand-named slot variant (SPEC §6.3). `explore-0` does not match. */
export const VARIANT_PATTERN = /^(explore|implement|context)-([1-9][0-9]*)$/
