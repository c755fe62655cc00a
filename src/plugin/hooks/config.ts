/**
 * opencode's config object (SPEC §2, §13): the pool's agents injected (the engine keeps the object for
 * hot reload) and OmniRoute registered when its probe passes; and at start, the object the boot entry's
 * first config hook injected, bound again. The part ends the call for an object it cannot work on.
 */
import { isPlainObject } from "../../core/extract.js"
import type { GatewayService } from "../../services/gateway/Gateway.js"
import type { PoolEngineService } from "../../services/pool/PoolEngine.js"
import { workable } from "../configObject.js"
import type { Handoff } from "../handoff.js"
import type { Parts, Runner } from "./runner.js"

export const configHooks = (r: Runner, engine: PoolEngineService, gateway: GatewayService): Parts => ({
  config: async (input) => {
    if (r.disposed() || !isPlainObject(input)) return true
    if (!workable(input)) {
      await r.log("error", "config injection failed: opencode's config object cannot be read or written")
      return true
    }
    await r.run(engine.configure(input), "config injection")
    await r.run(gateway.register(input), "omniroute")
    return false
  }
})

/**
 * The boot's config hook injected `handoff.config` from the same pool: binding it again writes the same
 * agents, says what that hook found, keeps it for reloads and runs the price advisory, all after the hook.
 */
export const bindHandoff = async (r: Runner, engine: PoolEngineService, handoff: Handoff): Promise<void> => {
  for (const w of handoff.once) await r.log("warn", w)
  await r.run(engine.configure(handoff.config), "config injection")
  for (const l of handoff.lines) await r.log(l.level, l.message)
}
