/**
 * The first config hook's injection as the boot entry makes it, before the engine is loaded: the slots
 * the engine binds once its pool is applied, and the injected agents and providers, identical to what
 * the engine's own binding writes (core/inject.ts). Pure.
 */
import { injectConfig, type InjectOptions } from "../inject.js"
import type { JsonRecord } from "../json.js"
import { entriesFromJson, resolveMaxSlots, validateEntries, type Slot } from "../pool/pool.js"

/**
 * The slots the engine holds after its `pool` event: the trace machine validates the pool line again
 * (trace/machine.ts, with `maxSlots` the slot count above 4, as engine/step.ts sends it); a line it
 * refuses leaves the engine without slots.
 */
export const engineSlots = (slots: ReadonlyArray<Slot>): ReadonlyArray<Slot> => {
  const max = resolveMaxSlots(slots.length > 4 ? slots.length : undefined)
  const got = entriesFromJson({ slots: slots.map((s) => ({ model: s.model, weight: s.weight })) })
  if ("unusable" in got) return []
  const result = validateEntries(got.entries, max.maxSlots)
  return result._tag === "Usable" ? result.slots : []
}

export interface BootInjection {
  readonly agent: unknown
  readonly provider: unknown
  /** The config's `command` after injection: undefined when it had none and none was added (nothing to write then). */
  readonly command: unknown
  /**
   * The warnings the engine's binding of the injected config will not say again (a variant that pinned
   * another model is bound by now), in their order: logged before that binding, they complete its lines.
   */
  readonly once: ReadonlyArray<string>
}

/** `config` injected with `slots` (not modified: the caller writes `agent`, `provider` and `command` into it). */
export const bootInjection = (config: JsonRecord, slots: ReadonlyArray<Slot>, origin: string, options: InjectOptions): BootInjection => {
  const first = injectConfig(config, slots, origin, options)
  const provider = first.config.provider !== undefined ? first.config.provider : config.provider
  const command = first.config.command !== undefined ? first.config.command : config.command
  const again = injectConfig({ ...config, agent: first.config.agent, provider, command }, slots, origin, options).warnings
  const left = [...again]
  const once = first.warnings.filter((w) => {
    const i = left.indexOf(w)
    if (i === -1) return true
    left.splice(i, 1)
    return false
  })
  return { agent: first.config.agent, provider: first.config.provider, command: first.config.command, once }
}
