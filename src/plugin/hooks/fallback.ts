/**
 * Fallbacks (issue 12, US-50) and spin detection: each model request (`chat.params`) tells the engine
 * the session's model and agent; a user message naming a cooling original runs on the session's
 * fallback (`chat.message` rewrites its model). Each switch the engine decides is one notification: its
 * `Announce` effect, carried out by the notify feature's runner (layers/notify/runAnnounce.ts).
 */
import { assign } from "../../core/extract.js"
import { effectOf } from "../../core/engine/effects.js"
import { promptTarget } from "../../services/opencode/SessionPrompt.js"
import type { PoolEngineService } from "../../services/pool/PoolEngine.js"
import { requestOf, userMessageOf } from "../events.js"
import type { Parts, Runner } from "./runner.js"

export const fallbackHooks = (r: Runner, engine: PoolEngineService): Parts => ({
  "chat.params": async (input) => {
    const q = requestOf(input)
    if (q !== undefined) await r.run(engine.apply({ type: "request", ...q }), "chat.params")
  },
  "chat.message": async (input, output) => {
    if (r.disposed()) return
    let m: ReturnType<typeof userMessageOf>
    try {
      m = userMessageOf(input, output)
    } catch {
      return // a hostile shape: the message runs as sent
    }
    if (m === undefined) return
    const out = await r.run(engine.apply({ type: "message", session: m.session, model: m.model, agent: m.agent }), "fallback")
    const rewrite = effectOf(out, "Model")
    if (rewrite !== undefined && !assign(m.message, "model", promptTarget(rewrite.model))) {
      await r.log("error", `fallback could not rewrite the message of ${m.session} to ${rewrite.model}; it runs on ${m.model}`, { session: m.session, model: m.model })
    }
  }
})
