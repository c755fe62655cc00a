/**
 * Pool files: the flat and JSON forms (SPEC §3.2) and the validator both share (SPEC §3.3).
 * Pure: text in, slots and warnings out.
 */
import { MAX_SLOTS_DEFAULT, MAX_SLOTS_LIMIT, WEIGHT_MAX } from "../constants.js"
import { JSON_MAX_DEPTH } from "../readLimits.js"
import { jsonTooDeep } from "../extract.js"
import { echo } from "../printable.js"

export interface Slot {
  /** 1-based position in declaration order. */
  readonly index: number
  /** `provider/model-id`, trimmed. */
  readonly model: string
  /** Text before the first `/`. */
  readonly provider: string
  readonly weight: number
}

export interface PoolEntry {
  readonly model: unknown
  readonly weight?: unknown
  readonly tier?: unknown
  /** Flat form only: the line the entry came from, for warnings. */
  readonly line?: number
}

export type PoolResult =
  | { readonly _tag: "Usable"; readonly slots: ReadonlyArray<Slot>; readonly warnings: ReadonlyArray<string> }
  | { readonly _tag: "Unusable"; readonly reason: string; readonly warnings: ReadonlyArray<string> }

const NUMERIC_STRING = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/

/** A number, or a trimmed decimal string with an optional exponent; anything else is NaN. */
export const numericValue = (value: unknown): number => {
  if (typeof value === "number") return value
  if (typeof value === "string") {
    const trimmed = value.trim()
    return NUMERIC_STRING.test(trimmed) ? Number(trimmed) : Number.NaN
  }
  return Number.NaN
}

/** `maxSlots`: an integer 1–8, otherwise the default 4 (with a warning when it was given). */
export const resolveMaxSlots = (value: unknown): { readonly maxSlots: number; readonly warning?: string } => {
  if (value === undefined) return { maxSlots: MAX_SLOTS_DEFAULT }
  if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= MAX_SLOTS_LIMIT) {
    return { maxSlots: value }
  }
  return {
    maxSlots: MAX_SLOTS_DEFAULT,
    warning: `option maxSlots ${JSON.stringify(value)} invalid (an integer 1-${MAX_SLOTS_LIMIT}), using ${MAX_SLOTS_DEFAULT}`
  }
}

/** A value echoed in a warning: printable and cut to ECHO_MAX_CHARS (a value nested too deep to show is named so). */
const show = (value: unknown): string => {
  if (typeof value === "string") return echo(value)
  try {
    return echo(JSON.stringify(value) ?? String(value))
  } catch {
    return "(a value nested too deeply to show)"
  }
}

/** SPEC §3.3, entries in order. */
export const validateEntries = (entries: ReadonlyArray<PoolEntry>, maxSlots: number): PoolResult => {
  const slots: Array<Slot> = []
  const warnings: Array<string> = []
  const seen = new Set<string>()
  const tiersWarned = new Set<string>()
  entries.forEach((entry, i) => {
    const where = entry.line !== undefined ? `line ${entry.line}` : `entry ${i + 1}`
    const model = typeof entry.model === "string" ? entry.model.trim() : undefined
    if (slots.length >= maxSlots) {
      warnings.push(`pool capped at ${maxSlots} slots: dropped ${show(model ?? entry.model)}`)
      return
    }
    const cut = model === undefined ? -1 : model.indexOf("/")
    if (model === undefined || cut <= 0 || cut === model.length - 1) {
      warnings.push(`${where}: model ${show(entry.model)} is not provider/model-id; dropped`)
      return
    }
    let raw: unknown = entry.weight
    if (raw === undefined && entry.tier !== undefined) {
      raw = entry.tier === "primary" ? 2 : 1
      const tierKey = show(entry.tier)
      if (!tiersWarned.has(tierKey)) {
        tiersWarned.add(tierKey)
        warnings.push(`tier ${typeof entry.tier === "string" ? JSON.stringify(echo(entry.tier)) : show(entry.tier)} read as weight ${raw as number}; prefer "weight"`)
      }
    }
    let weight = raw === undefined ? 1 : numericValue(raw)
    if (!(Number.isFinite(weight) && weight > 0 && weight <= WEIGHT_MAX)) {
      warnings.push(`slot ${slots.length + 1} (${model}): weight ${show(raw)} invalid, using 1`)
      weight = 1
    }
    if (seen.has(model)) {
      warnings.push(`${where}: duplicate model ${model} dropped`)
      return
    }
    seen.add(model)
    slots.push({ index: slots.length + 1, model, provider: model.slice(0, cut), weight })
  })
  return slots.length === 0
    ? { _tag: "Unusable", reason: "no usable slot", warnings }
    : { _tag: "Usable", slots, warnings }
}

/** The JSON form's `slots` array, or why the source is unusable. */
export const entriesFromJson = (
  value: unknown
): { readonly entries: ReadonlyArray<PoolEntry> } | { readonly unusable: string } => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { unusable: "not a JSON object with \"slots\"" }
  }
  const slots = (value as { readonly slots?: unknown }).slots
  if (!Array.isArray(slots) || slots.length === 0) return { unusable: "\"slots\" is not a non-empty array" }
  return {
    entries: slots.map((s: unknown): PoolEntry => {
      if (typeof s !== "object" || s === null) return { model: s }
      const o = s as { readonly model?: unknown; readonly weight?: unknown; readonly tier?: unknown }
      return { model: o.model, weight: o.weight, tier: o.tier }
    })
  }
}

/** Flat form: `zen/alpha 3  # main`. */
export const entriesFromFlat = (text: string): { readonly entries: ReadonlyArray<PoolEntry>; readonly warnings: ReadonlyArray<string> } => {
  const entries: Array<PoolEntry> = []
  const warnings: Array<string> = []
  text.split(/\r?\n/).forEach((rawLine, i) => {
    const hash = rawLine.indexOf("#")
    const line = (hash >= 0 ? rawLine.slice(0, hash) : rawLine).trim()
    if (line === "") return
    const tokens = line.split(/\s+/)
    if (tokens.length > 2) warnings.push(`line ${i + 1}: extra text ignored`)
    entries.push(tokens[1] === undefined ? { model: tokens[0], line: i + 1 } : { model: tokens[0], weight: tokens[1], line: i + 1 })
  })
  return { entries, warnings }
}

/** Parses a pool file of either form (SPEC §3.2) and validates it (§3.3). */
export const parsePoolText = (text: string, maxSlots: number = MAX_SLOTS_DEFAULT): PoolResult => {
  if (text.trimStart().startsWith("{")) {
    if (jsonTooDeep(text)) return { _tag: "Unusable", reason: `nested too deeply (more than ${JSON_MAX_DEPTH} levels)`, warnings: [] }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (e) {
      return { _tag: "Unusable", reason: `invalid JSON: ${(e as Error).message}`, warnings: [] }
    }
    const got = entriesFromJson(parsed)
    return "unusable" in got ? { _tag: "Unusable", reason: got.unusable, warnings: [] } : validateEntries(got.entries, maxSlots)
  }
  const flat = entriesFromFlat(text)
  const result = validateEntries(flat.entries, maxSlots)
  return { ...result, warnings: [...flat.warnings, ...result.warnings] }
}

/** `1=zen/alpha w3, 2=go/gamma w1` (the log form of SPEC §3.4 and §4). */
export const describeSlots = (slots: ReadonlyArray<Slot>): string =>
  slots.map((s) => `${s.index}=${s.model} w${s.weight}`).join(", ")
