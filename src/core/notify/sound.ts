/** Sounds, urgencies and icons (SPEC §10.3, §10.6): whitelists and fixed tables; nothing here becomes a path or a command. */

export const SOUNDS = ["none", "done", "question", "permission", "error"] as const
export type Sound = (typeof SOUNDS)[number]

export const URGENCIES = ["low", "normal", "critical"] as const
export type Urgency = (typeof URGENCIES)[number]

export const ICONS = ["utilities-terminal", "dialog-information", "dialog-error", "dialog-warning", "system-run", "emblem-default"] as const
export type Icon = (typeof ICONS)[number]

const pick = <T extends string>(allowed: ReadonlyArray<T>, fallback: T) => (v: unknown): T => {
  if (typeof v !== "string") return fallback
  const s = v.trim().toLowerCase()
  return (allowed as ReadonlyArray<string>).includes(s) ? (s as T) : fallback
}

/** Trimmed, case-insensitive; anything outside the whitelist is `none`. */
export const soundOf = pick<Sound>(SOUNDS, "none")
/** Trimmed, case-insensitive; anything else is `normal`. */
export const urgencyOf = pick<Urgency>(URGENCIES, "normal")
/** Trimmed, case-insensitive; anything else is `utilities-terminal`. */
export const iconOf = pick<Icon>(ICONS, "utilities-terminal")

/** The `sound-name` hint on Linux (freedesktop sound theme names); `none` has no hint. */
export const LINUX_SOUND: Readonly<Record<Sound, string | undefined>> = {
  none: undefined,
  done: "complete",
  question: "message-new-instant",
  permission: "dialog-warning",
  error: "dialog-error"
}

/** The `sound name` of `display notification` on macOS; `none` has no sound clause. */
export const MAC_SOUND: Readonly<Record<Sound, string | undefined>> = {
  none: undefined,
  done: "Glass",
  question: "Ping",
  permission: "Hero",
  error: "Basso"
}

const SILENCING = new Set(["0", "false", "off", "no"])

/**
 * Whether sounds play (SPEC §2.2, §10.3): `OCPOOL_SOUND`, trimmed and case-insensitive, silences with
 * `0`/`false`/`off`/`no` and turns sound on with any other non-empty value; empty or unset leaves it to
 * the option `sound` (default true).
 */
export const soundsOn = (option: boolean, env: string | undefined): boolean => {
  const v = env?.trim().toLowerCase() ?? ""
  if (v === "") return option
  return !SILENCING.has(v)
}
