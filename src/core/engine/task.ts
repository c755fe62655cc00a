/**
 * A pooled task's life in the engine (SPEC §6, §8.2): the `task` spawn routed (or a hand-named
 * variant refused), its child session bound to the claim, and its end. A spawn of a pooled base routes
 * on every process's load; a successful end may clear a cooldown record: both read shared state.
 */
import { VARIANT_PATTERN } from "../constants.js"
import { isPooledBase } from "../pool/routing.js"
import { childAgent } from "../session/title.js"
import { withChild } from "../session/tree.js"
import { handNamedVariant } from "../spawn/handNamed.js"
import { getClaim, unboundOf } from "../trace/claimTable.js"
import type { EngineState } from "./state.js"
import { endTask, prepareSweep } from "./claimSteps.js"
import { local, NONE, TRANSACT, TRANSACT_WITH_PEERS, type Handlers } from "./turn.js"

/** Whether ending claim `key` is a success (it then reads shared state: a success clears a record). */
const endsInSuccess = (state: EngineState, key: string, ok: boolean): boolean =>
  ok && !state.signalled.has(key) && getClaim(state.machine.table, key) !== undefined

export const taskHandlers: Handlers<"spawn" | "taskEnd" | "child"> = {
  spawn: {
    // a hand-named variant is only refused, and another base is not the pool's
    needs: (_state, event) => (handNamedVariant(event.base) === undefined && isPooledBase(event.base) ? TRANSACT_WITH_PEERS : NONE),
    run: (turn, event) => {
      const at = turn.at
      const variant = handNamedVariant(event.base)
      const claim = `${event.owner}:${event.call}`
      if (variant === undefined && !isPooledBase(event.base)) return
      if (variant !== undefined) {
        turn.apply({ at, type: "spawn", claim, base: event.base, session: event.owner })
        turn.effect({ _tag: "Refuse", requested: variant.requested, base: variant.base })
        return
      }
      const prepared = prepareSweep(turn)
      const decisions = turn.apply({ at, type: "spawn", claim, base: event.base, session: event.owner, ...prepared, ...turn.shared(true), abort: "pending" })
      turn.set("lastSweepAt", at)
      const route = decisions.find((x) => x.type === "route")
      if (route?.type === "route") turn.effect({ _tag: "Route", agent: route.agent })
      if (event.taskId !== undefined && event.taskId !== "") turn.apply({ at, type: "bind", claim, session: event.taskId, activity: true })
    }
  },
  taskEnd: {
    needs: (state, event) => (endsInSuccess(state, event.claim, event.ok) ? TRANSACT : NONE),
    run: (turn, event) => endTask(turn, event.claim, event.ok)
  },
  child: local((turn, event) => {
    const at = turn.at
    turn.state = withChild(turn.state, event.parent, { id: event.id, createdAt: at, agent: event.agent }, event.title)
    if (turn.state.primaries.has(event.id)) {
      const primaries = new Map(turn.state.primaries)
      primaries.delete(event.id)
      turn.set("primaries", primaries)
    }
    // the child's agent, or the pooled variant its title names; an unnamed child takes the oldest unbound claim
    const variant = childAgent(event.agent, event.title)
    const unbound = unboundOf(turn.machine.table, event.parent)
    let match = unbound.find((c) => `${c.base}-${c.slot}` === variant)
    if (match === undefined && (variant === undefined || VARIANT_PATTERN.test(variant))) match = unbound[0]
    if (match !== undefined) {
      turn.put("sampled", event.id, at)
      turn.apply({ at, type: "bind", claim: match.key, session: event.id, activity: true })
    }
  })
}
