/**
 * Quota sensing (issues 12, 19): the fetch wrappers put on every config hook (after the config part),
 * each wrapped provider's responses handed to the engine, never awaited, and an error answer's body
 * read in the background (`FailureReads`) so that it reaches the engine before the retry status that
 * follows it (the bus part waits for it).
 */
import { Effect } from "effect"
import { slotsOf } from "../../core/engine/state.js"
import type { JsonRecord } from "../../core/json.js"
import type { Settings } from "../../core/options.js"
import type { PoolEngineService } from "../../services/pool/PoolEngine.js"
import type { FailureReadsService } from "../../services/quota/FailureReads.js"
import { ownFetchLine, type Handoff, type Sensing } from "../handoff.js"
import { installQuotaFetch, type FailureReport, type ResponseReport } from "../quotaFetch.js"
import type { Parts, Runner } from "./runner.js"

export interface QuotaSensing extends Sensing {
  /** Puts the wrappers on the providers of `config` (a workable config object) and says which keep their own fetch, once each. */
  readonly sense: (config: JsonRecord) => Promise<void>
}

export const quotaSensing = (r: Runner, engine: PoolEngineService, failures: FailureReadsService, settings: Settings, handoff: Handoff | undefined): QuotaSensing => {
  const report = (res: ResponseReport): void => {
    const { headers, model, session } = res
    if (Object.keys(headers).length > 0) void r.run(engine.apply({ type: "response", headers, model, session, reserve: settings.quotaReserve }), "quota sensing")
    // a request that succeeded counts in its group's learned budget (issue 35)
    if (res.ok === true) void r.run(engine.apply({ type: "sent", model, session, reserve: settings.quotaReserve }), "budget counting")
  }
  const fail = (f: FailureReport): void => {
    const read = Effect.flatMap(
      Effect.promise(() => f.body),
      (body) => r.guarded(engine.apply({ type: "failed", session: f.session, status: f.status, headers: f.headers, body }), "failure sensing")
    )
    r.runNow(failures.started(f.session, Effect.asVoid(read)), "failure sensing")
  }
  const wrappers = handoff?.wrappers ?? new WeakSet<object>()
  const ownFetchTold = new Set<string>(handoff?.ownFetch)
  const sense = async (config: JsonRecord): Promise<void> => {
    const state = await r.run(engine.state, "quota sensing")
    if (state === undefined) return
    let own: ReadonlyArray<string> = []
    try {
      own = installQuotaFetch(config, slotsOf(state), report, wrappers, fail)
    } catch (e) {
      return void (await r.log("error", `quota sensing failed: ${e instanceof Error ? e.message : String(e)}`))
    }
    for (const p of own) {
      if (ownFetchTold.has(p)) continue
      ownFetchTold.add(p)
      await r.log("info", ownFetchLine(p))
    }
  }
  return { report, fail, sense }
}

/** The config hook's part: it runs after the config part, which ends the call for an object that cannot be worked on. */
export const quotaHooks = (s: QuotaSensing): Parts => ({
  config: (input) => s.sense(input as JsonRecord)
})
