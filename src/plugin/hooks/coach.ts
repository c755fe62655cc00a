/**
 * Coaching (issue 12, US-49): one quota line added to a root session's system prompt when the engine
 * says so (option `coach`). Every read and write of opencode's arrays is guarded: a hostile shape gets
 * no line, never an exception.
 */
import { effectOf } from "../../core/engine/effects.js"
import { assign } from "../../core/extract.js"
import type { PoolEngineService } from "../../services/pool/PoolEngine.js"
import { appendIndex, coachTarget } from "../events.js"
import type { Parts, Runner } from "./runner.js"

export const coachHooks = (r: Runner, engine: PoolEngineService, coach: boolean): Parts => ({
  "experimental.chat.system.transform": async (input, output) => {
    if (r.disposed() || !coach) return
    let at: ReturnType<typeof coachTarget>
    try {
      at = coachTarget(input, output)
    } catch {
      return // a hostile shape: no coaching, never an exception into opencode
    }
    if (at === undefined) return
    const out = await r.run(engine.apply({ type: "coach", session: at.session, model: at.model }), "coaching")
    const line = effectOf(out, "Coach")?.line
    if (line === undefined) return
    // the end is read again: the array may have grown while the engine decided; every read is guarded
    const end = appendIndex(at.system)
    if (end === undefined || !assign(at.system, String(end), line)) {
      await r.log("error", `coaching could not add its line to the system prompt of ${at.session}`, { session: at.session })
    }
  }
})
