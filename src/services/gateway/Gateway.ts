/** The OmniRoute gateway (SPEC §13, US-28): registered into opencode's config when its probe passes. */
import { Context, type Effect } from "effect"
import type { JsonRecord } from "../../core/json.js"

export interface GatewayService {
  /**
   * Adds the `omniroute` provider to `config` when the option is on and the gateway is healthy (probed
   * once per process; one warning when it is invalid or unhealthy, nothing when it is off). Never fails.
   */
  readonly register: (config: JsonRecord) => Effect.Effect<void>
}

export class Gateway extends Context.Tag("opencode-pool/Gateway")<Gateway, GatewayService>() {}
