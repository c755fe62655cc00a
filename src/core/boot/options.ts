/**
 * What the plugin's boot entry reads of the options and the environment, without Effect: whether the
 * plugin is off, and the few settings the first config hook needs (the pool's sources, `maxSlots`,
 * `delegate`, whether OmniRoute is asked for). Each value is the one `parseSettings` (core/options.ts)
 * gives; its warnings are logged by the engine, which parses the options in full. Pure.
 */
import { isRecord, type JsonRecord } from "../json.js"
import { resolveMaxSlots } from "../pool.js"

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
  /** The option `omniroute` as given (its registration probes the gateway: the engine's work). */
  readonly omniroute: unknown
}

/** The boot entry's settings: `models`, `modelsFile`, `maxSlots`, `delegate` as `parseSettings` reads them. */
export const bootOptions = (options: Readonly<Record<string, unknown>> | undefined): BootOptions => {
  const o = options ?? {}
  return {
    models: isRecord(o.models) ? o.models : undefined,
    modelsFile: typeof o.modelsFile === "string" ? o.modelsFile : undefined,
    maxSlots: resolveMaxSlots(o.maxSlots).maxSlots,
    delegate: typeof o.delegate === "boolean" ? o.delegate : true,
    omniroute: o.omniroute
  }
}
