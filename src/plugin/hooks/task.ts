/**
 * The `task` tool (SPEC §6.3, §6.4): a spawn routed to a slot variant, the engine deciding on plain
 * values and the routed agent copied back into opencode's args; a hand-named slot variant refused by
 * throwing `VariantRefused` out of the hook, which no hostile input can suppress (the only throw of
 * these hooks besides `PermitWaitEnded`); the call's end releasing its claim.
 */
import { assign } from "../../core/extract.js"
import { spawnGate } from "../../core/spawn/handNamed.js"
import { VariantRefused, type PoolEngineService } from "../../services/pool/PoolEngine.js"
import { taskCall, taskEndClaim } from "../events.js"
import type { Parts } from "./merge.js"
import type { Runner } from "./runner.js"

export const taskHooks = (r: Runner, engine: PoolEngineService): Parts => ({
  "tool.execute.before": async (input, output) => {
    if (r.disposed()) return
    const task = taskCall(input, output)
    if (task === undefined) return
    const gate = spawnGate(task.agent, task.session, task.call)
    if (gate._tag === "pass") return
    if (gate._tag === "refuse") {
      await r.log("warn", gate.log)
      throw new VariantRefused(gate.refusal.requested, gate.refusal.base)
    }
    // the engine sees plain values only; the routed agent is copied back into opencode's args
    const args: Record<string, unknown> = { subagent_type: task.agent, ...(task.taskId === undefined ? {} : { task_id: task.taskId }) }
    const outcome = await r.attempt(engine.beforeTask(gate.session, gate.call, args))
    if (outcome?._tag === "Left") throw outcome.left
    // a variant name is refused even when the engine failed before it could say so
    if (gate.refusal !== undefined) throw new VariantRefused(gate.refusal.requested, gate.refusal.base)
    const routed = args.subagent_type
    if (routed !== task.agent && !assign(task.args, "subagent_type", routed)) {
      await r.log("error", `routing could not rewrite the task call ${gate.session}:${gate.call} to ${String(routed)}; spawn unchanged`)
    }
  },
  "tool.execute.after": (input) => {
    const claim = taskEndClaim(input)
    if (claim === undefined) return false
    return r.run(engine.apply({ type: "taskEnd", claim, ok: true }), "release").then(() => true)
  }
})
