/**
 * Phrase matching (SPEC §7.2): case-insensitive containment where each space inside a phrase may
 * stand for any run, possibly empty, of whitespace, `_` or `-`.
 */
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** One regular expression that matches any of the phrases. */
export const phraseMatcher = (phrases: ReadonlyArray<string>): RegExp =>
  new RegExp(phrases.map((p) => p.toLowerCase().split(" ").map(escape).join("[\\s_-]*")).join("|"), "u")
