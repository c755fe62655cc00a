/**
 * What the plugin's boot entry reads of the options and the environment, without Effect: whether the
 * plugin is off, and the few settings the first config hook needs (the pool's sources, `maxSlots`,
 * `delegate`, `contextMap`, whether OmniRoute is asked for). Each value is the one `parseSettings`
 * (core/options.ts) gives; its warnings are logged by the engine, which parses the options in full. Pure.
 */
import { MAP_MAX_BYTES_DEFAULT } from "../context/map.js"
import { isRecord, type JsonRecord } from "../json.js"
import { resolveMaxSlots } from "../pool/pool.js"

/** The option `contextMap` (SPEC §13): whether the map is on, and the byte budget of its five files. */
export interface ContextMapSetting {
  readonly enabled: boolean
  readonly maxBytes: number
}

export const CONTEXT_MAP_DEFAULT: ContextMapSetting = { enabled: true, maxBytes: MAP_MAX_BYTES_DEFAULT }

const isPositiveInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 1

/**
 * The option `contextMap`: `true` (or absent) on, `false` off, an object `{ enabled?, maxBytes? }` on
 * unless `enabled` is false. A value of another type, or a bad field, gives one warning naming the
 * option and its default. Hand-written (not effect/Schema): the boot entry reads it without Effect.
 */
export const parseContextMap = (value: unknown): { readonly setting: ContextMapSetting; readonly warnings: ReadonlyArray<string> } => {
  if (value === undefined || value === true) return { setting: CONTEXT_MAP_DEFAULT, warnings: [] }
  if (value === false) return { setting: { ...CONTEXT_MAP_DEFAULT, enabled: false }, warnings: [] }
  if (!isRecord(value)) {
    return { setting: CONTEXT_MAP_DEFAULT, warnings: [`option contextMap ${JSON.stringify(value) ?? String(value)} invalid (true, false or { enabled, maxBytes }), using true`] }
  }
  const warnings: Array<string> = []
  let enabled = true
  if (value.enabled !== undefined) {
    if (typeof value.enabled === "boolean") enabled = value.enabled
    else warnings.push("option contextMap.enabled must be a boolean; using true")
  }
  let maxBytes = MAP_MAX_BYTES_DEFAULT
  if (value.maxBytes !== undefined) {
    if (isPositiveInt(value.maxBytes)) maxBytes = value.maxBytes
    else warnings.push(`option contextMap.maxBytes ${JSON.stringify(value.maxBytes) ?? String(value.maxBytes)} invalid (an integer 1 or more), using ${MAP_MAX_BYTES_DEFAULT}`)
  }
  return { setting: { enabled, maxBytes }, warnings }
}

/** `OCPOOL_DISABLE` turns the plugin off for `1`, `true`, `yes`, `on` (any case); nothing else. */
export const envDisables = (value: string | undefined): boolean =>
  value !== undefined && ["1", "true", "yes", "on"].includes(value.trim().toLowerCase())

export const isDisabled = (options: Readonly<Record<string, unknown>> | undefined, env: Readonly<Record<string, string | undefined>>): boolean =>
  options?.enabled === false || envDisables(env.OCPOOL_DISABLE)

export interface BootOptions {
  readonly models: JsonRecord | undefined
  readonly modelsFile: string | undefined
  readonly maxSlots: number
  readonly delegate: boolean
  /** Whether the context map is on (the option `contextMap`). */
  readonly contextMap: boolean
  /** The option `omniroute` as given (its registration probes the gateway: the engine's work). */
  readonly omniroute: unknown
}

/** The boot entry's settings: `models`, `modelsFile`, `maxSlots`, `delegate`, `contextMap` as `parseSettings` reads them. */
export const bootOptions = (options: Readonly<Record<string, unknown>> | undefined): BootOptions => {
  const o = options ?? {}
  return {
    models: isRecord(o.models) ? o.models : undefined,
    modelsFile: typeof o.modelsFile === "string" ? o.modelsFile : undefined,
    maxSlots: resolveMaxSlots(o.maxSlots).maxSlots,
    delegate: typeof o.delegate === "boolean" ? o.delegate : true,
    contextMap: parseContextMap(o.contextMap).setting.enabled,
    omniroute: o.omniroute
  }
}
