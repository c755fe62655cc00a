/**
 * The pool source chain (SPEC §3.1): the first usable source wins; each unusable one warns and falls
 * through; the built-in fallback always works. Pure: the shell reads the files and passes their text.
 * Warnings echo file content, so they are made printable (no escape sequence reaches a terminal or log).
 */
import { BUILT_IN_SLOTS } from "./preset.js"
import { printable } from "./printable.js"
import { entriesFromJson, parsePoolText, validateEntries, type PoolResult, type Slot } from "./pool/pool.js"

export type PoolSource =
  | { readonly kind: "object"; readonly origin: string; readonly value: unknown }
  | { readonly kind: "file"; readonly origin: string; readonly text: string }
  /** A file that could not be read; `missing` sources are skipped silently. */
  | { readonly kind: "unreadable"; readonly origin: string; readonly reason: string; readonly missing: boolean }

export interface ResolvedPool {
  readonly slots: ReadonlyArray<Slot>
  readonly origin: string
  readonly warnings: ReadonlyArray<string>
}

const fromObject = (value: unknown, maxSlots: number): PoolResult => {
  const got = entriesFromJson(value)
  return "unusable" in got ? { _tag: "Unusable", reason: got.unusable, warnings: [] } : validateEntries(got.entries, maxSlots)
}

export const resolvePool = (sources: ReadonlyArray<PoolSource>, maxSlots: number): ResolvedPool => {
  const warnings: Array<string> = []
  for (const source of sources) {
    if (source.kind === "unreadable") {
      if (!source.missing) warnings.push(`pool source ${source.origin} unreadable (${source.reason}); falling through`)
      continue
    }
    const result = source.kind === "object" ? fromObject(source.value, maxSlots) : parsePoolText(source.text, maxSlots)
    for (const w of result.warnings) warnings.push(`${source.origin}: ${w}`)
    if (result._tag === "Usable") return { slots: result.slots, origin: source.origin, warnings: warnings.map(printable) }
    warnings.push(`pool source ${source.origin} unusable (${result.reason}); falling through`)
  }
  const builtIn = validateEntries(BUILT_IN_SLOTS, maxSlots)
  return { slots: builtIn._tag === "Usable" ? builtIn.slots : [], origin: "built-in", warnings: warnings.map(printable) }
}
