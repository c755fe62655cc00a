/**
 * Model prices (US-3, US-23): the shipped snapshot `presets/prices.json`, opencode's own model
 * catalog (the models.dev form that `OPENCODE_MODELS_PATH` names), and the arithmetic opencode uses
 * to price a message. Pure: parsed JSON in, a lookup table out.
 */
import { isRecord } from "./json.js"
import type { Slot } from "./pool/pool.js"

/** USD per 1M tokens. A missing cache price counts 0, as opencode counts it. */
export interface Price {
  readonly input: number
  readonly output: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

/** `provider/model` → price. */
export type PriceTable = ReadonlyMap<string, Price>

export interface Tokens {
  readonly input: number
  readonly output: number
  readonly reasoning: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

const rate = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined)

/** A models.dev `cost` block, or undefined when input or output is not a usable number. */
export const priceOf = (cost: unknown): Price | undefined => {
  if (!isRecord(cost)) return undefined
  const input = rate(cost.input)
  const output = rate(cost.output)
  if (input === undefined || output === undefined) return undefined
  return { input, output, cacheRead: rate(cost.cache_read) ?? 0, cacheWrite: rate(cost.cache_write) ?? 0 }
}

/** `presets/prices.json`: `{ "models": { "provider/model": { input, output, cache_read?, cache_write? } } }`. */
export const parsePriceSnapshot = (json: unknown): PriceTable | undefined => {
  if (!isRecord(json) || !isRecord(json.models)) return undefined
  const table = new Map<string, Price>()
  for (const [model, cost] of Object.entries(json.models)) {
    const price = priceOf(cost)
    if (price !== undefined) table.set(model, price)
  }
  return table
}

/** opencode's catalog (models.dev `api.json`): `{ provider: { models: { id: { cost } } } }`. */
export const parseCatalog = (json: unknown): PriceTable | undefined => {
  if (!isRecord(json)) return undefined
  const table = new Map<string, Price>()
  for (const [provider, block] of Object.entries(json)) {
    if (!isRecord(block) || !isRecord(block.models)) continue
    for (const [id, model] of Object.entries(block.models)) {
      const price = isRecord(model) ? priceOf(model.cost) : undefined
      if (price !== undefined) table.set(`${provider}/${id}`, price)
    }
  }
  return table
}

/** The first table that prices the model wins. */
export const lookupPrice = (tables: ReadonlyArray<PriceTable>, model: string): Price | undefined => {
  for (const t of tables) {
    const p = t.get(model)
    if (p !== undefined) return p
  }
  return undefined
}

/** Priced above zero: costs money. */
export const costsMoney = (p: Price): boolean => p.input > 0 || p.output > 0 || p.cacheRead > 0 || p.cacheWrite > 0

/** USD for the tokens at the price, as opencode computes it (reasoning billed at the output rate). */
export const costOf = (p: Price, t: Tokens): number =>
  (t.input * p.input + (t.output + t.reasoning) * p.output + t.cacheRead * p.cacheRead + t.cacheWrite * p.cacheWrite) / 1_000_000

/** `$0.00` style; sub-cent amounts keep four decimals so they never read as free. */
export const formatUsd = (usd: number): string =>
  usd === 0 ? "$0.00" : usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`

/** The US-23 advisory line for one slot model priced above zero. */
export const pricedSlotWarning = (model: string, p: Price): string =>
  `slot model ${model} costs money (USD per 1M tokens: input ${p.input}, output ${p.output}); the pool is meant for free models`

/**
 * US-23: one advisory per slot model the snapshot prices above zero, in slot order, leaving out the
 * models already `warned` (the advisory is given once per process, however often the config hook runs).
 */
export const pricedSlotWarnings = (
  slots: ReadonlyArray<Slot>,
  table: PriceTable,
  warned: ReadonlySet<string> = new Set()
): ReadonlyArray<{ readonly model: string; readonly line: string }> => {
  const seen = new Set(warned)
  const out: Array<{ model: string; line: string }> = []
  for (const s of slots) {
    if (seen.has(s.model)) continue
    seen.add(s.model)
    const p = table.get(s.model)
    if (p !== undefined && costsMoney(p)) out.push({ model: s.model, line: pricedSlotWarning(s.model, p) })
  }
  return out
}
