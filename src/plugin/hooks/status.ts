/** The `pool_status` tool (SPEC §11): the engine's status text, with the heavy-work budgets (issue 21) this process knows. */
import type { PermitsService } from "../../services/permits/Permits.js"
import type { PoolEngineService } from "../../services/pool/PoolEngine.js"
import { POOL_STATUS_DESCRIPTION } from "../handoff.js"
import type { Parts, Runner } from "./runner.js"

export const statusHooks = (r: Runner, engine: PoolEngineService, permits: PermitsService): Parts => ({
  tool: {
    pool_status: {
      description: POOL_STATUS_DESCRIPTION,
      args: {},
      execute: async () => {
        // the heavy-work budgets with the capacities this process knows, over the view's one snapshot
        const text = await r.run(engine.statusText(permits.budgets), "pool_status")
        return text ?? "opencode-pool: status unavailable"
      }
    }
  }
})
