/**
 * The status view (`pool_status`): a `status` line stepped with the other processes' load and
 * cooldowns, as `ocpool status` shows them. It reads the shared state and writes none.
 */
import { READ_WITH_PEERS, type Handlers } from "./turn.js"

export const statusHandlers: Handlers<"status"> = {
  status: {
    needs: () => READ_WITH_PEERS,
    run: (turn) => {
      turn.apply({ at: turn.at, type: "status", ...turn.shared(true) })
    }
  }
}
