/**
 * The `task` tool (SPEC §6.3, §6.4): a spawn routed to a slot variant, the engine deciding on plain
 * values and the routed agent copied back into opencode's args; a hand-named slot variant refused by
 * throwing `VariantRefused` out of the hook, which no hostile input can suppress (the only throw of
 * these hooks besides `PermitWaitEnded`); the call's end releasing its claim.
 */
import { assign, field, text, TEXT_MAX } from "../../core/extract.js"
import { spawnGate } from "../../core/spawn/handNamed.js"
import { VariantRefused, type PoolEngineService } from "../../services/pool/PoolEngine.js"
import type { Parts, Runner } from "./runner.js"

/** A `task` call as `tool.execute.before` reads it; the ids are absent when they cannot be read. */
export interface TaskCall {
  readonly session: string | undefined
  readonly call: string | undefined
  /** `args.subagent_type`. */
  readonly agent: string
  readonly taskId: string | undefined
  /** `output.args`, where the routed agent is written back. */
  readonly args: unknown
}

/** The `task` call in `tool.execute.before`'s input and output, or `undefined` for any other tool or no agent name. */
export const taskCall = (input: unknown, output: unknown): TaskCall | undefined => {
  if (field(input, "tool") !== "task") return undefined
  const args = field(output, "args")
  const agent = text(field(args, "subagent_type"), TEXT_MAX)
  if (agent === undefined) return undefined
  return { session: text(field(input, "sessionID")), call: text(field(input, "callID")), agent, taskId: text(field(args, "task_id")), args }
}

/** The claim `tool.execute.after` ends (`<session>:<call>`), for a `task` call with readable ids. */
export const taskEndClaim = (input: unknown): string | undefined => {
  if (field(input, "tool") !== "task") return undefined
  const session = text(field(input, "sessionID"))
  const call = text(field(input, "callID"))
  return session !== undefined && call !== undefined ? `${session}:${call}` : undefined
}

export const taskHooks = (r: Runner, engine: PoolEngineService): Parts => ({
  tools: ["task"],
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
      await r.log("error", `routing could not rewrite the task call ${gate.session}:${gate.call} to ${String(routed)}; spawn unchanged`, { claim: `${gate.session}:${gate.call}`, session: gate.session })
    }
  },
  "tool.execute.after": (input) => {
    const claim = taskEndClaim(input)
    if (claim === undefined) return false
    return r.run(engine.apply({ type: "taskEnd", claim, ok: true }), "release").then(() => true)
  }
})
