/**
 * Whether the pool's slots name models opencode can run (issue 33, item 12; `ocpool doctor`'s
 * `models` check): each slot's provider and model against opencode's model catalog (models.dev's,
 * which opencode caches) and the `provider` blocks of the user's opencode configs, and whether each
 * provider has credentials (one of its catalog env vars set, an auth.json entry, or an `apiKey` in a
 * config). One finding per problem, with a "did you mean" when a known id is close to a typo.
 *
 * opencode's own provider `opencode` needs no key for a model whose input cost is 0 (opencode keeps
 * exactly those without a key and calls them with the key `public`); every other catalog provider
 * needs a credential, whatever its models cost (an OpenRouter `:free` model needs an OpenRouter key).
 * A provider only the user's config defines is known, with the models it lists (any, when it lists
 * none); what it needs to authenticate is not known, so it is never flagged.
 *
 * Pure: parsed JSON and facts in (the names of the env vars that are set and the provider ids that
 * auth.json has an entry for; never a value), findings out.
 */
import { editDistance } from "../editDistance.js"
import { parse, type ParseError } from "jsonc-parser"
import { isRecord } from "../json.js"
import { tooDeepAt } from "../jsoncEdit.js"
import type { Slot } from "../pool/pool.js"
import { echo } from "../printable.js"

/** A catalog model's prices as opencode reads them: a missing cost counts 0. */
export interface CatalogModel {
  readonly input: number
  readonly output: number
}

export interface CatalogProvider {
  /** The env vars any one of which carries the provider's key (models.dev's `env`). */
  readonly env: ReadonlyArray<string>
  readonly models: ReadonlyMap<string, CatalogModel>
}

/** Provider id → its env vars and models. */
export type ModelCatalog = ReadonlyMap<string, CatalogProvider>

const price = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0)

const strings = (v: unknown): ReadonlyArray<string> => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && x !== "") : [])

/**
 * opencode's catalog (`models.json`, models.dev's `api.json`): `{ provider: { env: [..], models: { id:
 * { cost } } } }`. `undefined` when it is not one (not an object, or no provider with a `models` object).
 */
export const parseModelCatalog = (json: unknown): ModelCatalog | undefined => {
  if (!isRecord(json)) return undefined
  const catalog = new Map<string, CatalogProvider>()
  for (const [id, block] of Object.entries(json)) {
    if (!isRecord(block) || !isRecord(block.models)) continue
    const models = new Map<string, CatalogModel>()
    for (const [modelId, model] of Object.entries(block.models)) {
      const cost = isRecord(model) && isRecord(model.cost) ? model.cost : {}
      models.set(modelId, { input: price(cost.input), output: price(cost.output) })
    }
    catalog.set(id, { env: strings(block.env), models })
  }
  return catalog.size === 0 ? undefined : catalog
}

/** What a config's `options.apiKey` gives: literal text left once `{env:NAME}` is taken out, and the env vars it names. */
export interface ApiKeyFact {
  readonly literal: boolean
  readonly env: ReadonlyArray<string>
}

/** A provider block of an opencode config (`provider.<id>`). */
export interface ConfigProvider {
  /** The ids of its `models` object; `undefined` when it has none. */
  readonly models: ReadonlySet<string> | undefined
  /** Its `env` list, which replaces the catalog's; `undefined` when it has none. */
  readonly env: ReadonlyArray<string> | undefined
  readonly apiKey: ApiKeyFact | undefined
}

const ENV_REF = /\{env:([^}]*)\}/g

/** `options.apiKey`: opencode replaces each `{env:NAME}` with the variable's value (empty when unset) before it reads the config. */
const apiKeyOf = (v: unknown): ApiKeyFact | undefined => {
  if (typeof v !== "string" || v === "") return undefined
  const env = [...v.matchAll(ENV_REF)].map((m) => m[1]!.trim()).filter((n) => n !== "")
  return { literal: v.replace(ENV_REF, "").trim() !== "", env }
}

/**
 * The `provider` blocks of one opencode config's text (JSONC). `undefined` when the text is not valid
 * JSONC (the `plugin` check names that); a config without `provider` gives an empty map.
 */
export const configProvidersOf = (text: string): ReadonlyMap<string, ConfigProvider> | undefined => {
  if (tooDeepAt(text) !== undefined) return undefined
  const errors: Array<ParseError> = []
  const config: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true })
  if (errors.length > 0) return undefined
  const out = new Map<string, ConfigProvider>()
  if (!isRecord(config) || !isRecord(config.provider)) return out
  for (const [id, block] of Object.entries(config.provider)) {
    if (!isRecord(block)) continue
    out.set(id, {
      models: isRecord(block.models) ? new Set(Object.keys(block.models)) : undefined,
      env: Array.isArray(block.env) ? strings(block.env) : undefined,
      apiKey: isRecord(block.options) ? apiKeyOf(block.options.apiKey) : undefined
    })
  }
  return out
}

/** Several configs' providers merged in the order opencode merges them: `models` add up, a later `env` or `apiKey` wins. */
export const mergeConfigProviders = (configs: ReadonlyArray<ReadonlyMap<string, ConfigProvider>>): ReadonlyMap<string, ConfigProvider> => {
  const out = new Map<string, ConfigProvider>()
  for (const config of configs) {
    for (const [id, p] of config) {
      const before = out.get(id)
      if (before === undefined) {
        out.set(id, p)
        continue
      }
      const models = before.models === undefined ? p.models : p.models === undefined ? before.models : new Set([...before.models, ...p.models])
      out.set(id, { models, env: p.env ?? before.env, apiKey: p.apiKey ?? before.apiKey })
    }
  }
  return out
}

const AUTH_TYPES = new Set(["api", "oauth", "wellknown"])

/** The provider ids opencode's `auth.json` holds a credential for (an entry of a type opencode reads); nothing else of it is kept. */
export const authProvidersOf = (json: unknown): ReadonlySet<string> => {
  if (!isRecord(json)) return new Set()
  return new Set(Object.entries(json).flatMap(([id, entry]) => (isRecord(entry) && typeof entry.type === "string" && AUTH_TYPES.has(entry.type) ? [id] : [])))
}

/** The catalog as the shell could read it, or why it could not. */
export type CatalogRead =
  | { readonly _tag: "Catalog"; readonly catalog: ModelCatalog; readonly path: string }
  | { readonly _tag: "Unavailable"; readonly reason: string }

export interface ModelCheckFacts {
  readonly catalog: CatalogRead
  /** Every opencode config's `provider` blocks, merged. */
  readonly configProviders: ReadonlyMap<string, ConfigProvider>
  /** The provider ids auth.json has a credential for. */
  readonly authProviders: ReadonlySet<string>
  /** Why auth.json could not be read, when it is there but unusable. */
  readonly authProblem?: string | undefined
  /** The names of the env vars that are set to a non-empty value. */
  readonly setEnv: ReadonlySet<string>
}

export interface ModelFinding {
  readonly status: "ok" | "warn"
  readonly detail: string
}

/** How far a typo may be from what was meant: 2 edits, or a quarter of the id's length when longer. */
const tolerance = (typed: string): number => Math.max(2, Math.floor(typed.length / 4))

/**
 * The candidate closest to `typed` within its tolerance (case ignored), or `undefined`. An id with a
 * namespace (`qwen/qwen3-coder:free`) also matches by its last segment when `typed` has none, so a
 * namespace left out is found too. Ties go to the shorter, then the first in code-point order.
 */
export const closest = (typed: string, candidates: Iterable<string>): string | undefined => {
  const t = typed.toLowerCase()
  const max = tolerance(t)
  let best: { id: string; d: number } | undefined
  for (const id of candidates) {
    const c = id.toLowerCase()
    const tail = !t.includes("/") && c.includes("/") ? c.slice(c.lastIndexOf("/") + 1) : undefined
    const d = Math.min(editDistance(t, c, max), tail === undefined ? max + 1 : editDistance(t, tail, max))
    if (d > max) continue
    if (best === undefined || d < best.d || (d === best.d && (id.length < best.id.length || (id.length === best.id.length && id < best.id)))) best = { id, d }
  }
  return best?.id
}

/** A model id that says it is free (`…:free`, `…-free`): only a model that costs nothing is suggested for it. */
const saysFree = (id: string): boolean => /[:-]free$/i.test(id)

const slotList = (slots: ReadonlyArray<Slot>): string => `slot${slots.length === 1 ? "" : "s"} ${slots.map((s) => s.index).join(", ")}`

const didYouMean = (suggestion: string | undefined): string => (suggestion === undefined ? "" : ` (did you mean ${echo(suggestion)}?)`)

const hasKey = (p: string, env: ReadonlyArray<string>, conf: ConfigProvider | undefined, facts: ModelCheckFacts): boolean =>
  env.some((e) => facts.setEnv.has(e)) ||
  facts.authProviders.has(p) ||
  (conf?.apiKey !== undefined && (conf.apiKey.literal || conf.apiKey.env.some((e) => facts.setEnv.has(e))))

/**
 * One finding per problem, provider by provider in the order the slots first name them (its unknown
 * models, then its credentials); one `ok` when there is none, one `warn` when the catalog could not be read.
 */
export const checkSlotModels = (slots: ReadonlyArray<Slot>, facts: ModelCheckFacts): ReadonlyArray<ModelFinding> => {
  if (facts.catalog._tag === "Unavailable") return [{ status: "warn", detail: `slot models not checked: ${facts.catalog.reason}` }]
  const { catalog, path } = facts.catalog
  if (slots.length === 0) return [{ status: "ok", detail: "no slot to check" }]
  const findings: Array<ModelFinding> = []
  const providers = [...new Set(slots.map((s) => s.provider))]
  for (const p of providers) {
    const own = slots.filter((s) => s.provider === p)
    const cat = catalog.get(p)
    const conf = facts.configProviders.get(p)
    if (cat === undefined && conf === undefined) {
      const suggestion = closest(p, [...catalog.keys(), ...facts.configProviders.keys()])
      findings.push({ status: "warn", detail: `${own.map((s) => echo(s.model)).join(", ")} (${slotList(own)}): unknown provider ${echo(p)}: not in opencode's model catalog nor under provider in an opencode config${didYouMean(suggestion)}` })
      continue
    }
    const known = new Set([...(cat?.models.keys() ?? []), ...(conf?.models ?? [])])
    // a provider of the user's own that lists no models: any model id may be right
    const checkable = cat !== undefined || conf?.models !== undefined
    const modelId = (s: Slot) => s.model.slice(p.length + 1)
    for (const s of own) {
      const id = modelId(s)
      if (!checkable || known.has(id)) continue
      // a model only a config lists has no price here: it counts as free
      const free = (m: string) => {
        const c = cat?.models.get(m)
        return c === undefined || (c.input === 0 && c.output === 0)
      }
      const candidates = saysFree(id) ? [...known].filter(free) : known
      const guess = closest(id, candidates)
      const where = conf?.models !== undefined ? (cat !== undefined ? "opencode's model catalog nor your opencode config" : "your opencode config") : "opencode's model catalog"
      findings.push({ status: "warn", detail: `${echo(s.model)} (slot ${s.index}): unknown model: ${echo(p)} has no model ${echo(id)} in ${where}${didYouMean(guess === undefined ? undefined : `${p}/${guess}`)}` })
    }
    if (cat === undefined) continue // what a provider of the user's own needs is not known
    const env = conf?.env ?? cat.env
    // opencode's own provider serves a model whose input cost is 0 without a key; an unknown model is named above
    const paid = (s: Slot) => (cat.models.get(modelId(s))?.input ?? 0) !== 0
    const needing = p === "opencode" ? own.filter(paid) : own
    if (needing.length === 0 || env.length === 0 || hasKey(p, env, conf, facts)) continue
    const notRead = facts.authProblem === undefined ? "" : `; auth.json not read: ${facts.authProblem}`
    findings.push({
      status: "warn",
      detail: `${echo(p)} (${slotList(needing)}): no credentials: none of ${env.map((e) => echo(e)).join(", ")} is set and opencode has no key for it (opencode auth login, or provider.${echo(p)}.options.apiKey); opencode loads no ${p === "opencode" ? "paid " : ""}${echo(p)} model without one${notRead}`
    })
  }
  if (findings.length > 0) return findings
  return [{ status: "ok", detail: `${slots.length} slot model${slots.length === 1 ? "" : "s"} known to opencode (catalog ${path}); every provider has credentials or needs none` }]
}
