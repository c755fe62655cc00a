/**
 * The notification engine for tests: NotifyEngineShell over the memory notifier, scripted session
 * lookups and the memory log (which takes the engine's `Effect.log*` lines), with fixed settings
 * (sounds and fade on unless told). Everything it did is in the returned arrays.
 */
import { Layer } from "effect"
import type { ChannelName } from "../../core/notify/channel.js"
import type { SessionFacts } from "../../core/session/facts.js"
import { AppLogMemory, type MemoryLine } from "../opencode/AppLogMemory.js"
import { SessionLookupMemory } from "../opencode/SessionLookupMemory.js"
import { NotifierMemory, type MemoryClose, type MemoryOutcome, type MemorySend } from "./NotifierMemory.js"
import { NotifyEngineShell } from "./NotifyEngineShell.js"
import type { NotifyEngine } from "../../services/notify/NotifyEngine.js"

export interface NotifyEngineTestOptions {
  /** The notifier's outcomes, taken in order (default: every send `ok`). */
  readonly outcomes?: Array<MemoryOutcome> | undefined
  /** The sessions lookups find (others fail). */
  readonly known?: ReadonlyMap<string, SessionFacts> | undefined
  readonly fade?: boolean | undefined
  readonly sounds?: boolean | undefined
  readonly channel?: ChannelName | undefined
  /** Each send and close takes this long, on the test's clock. */
  readonly latencyMs?: number | undefined
}

export interface NotifyEngineTestRig {
  readonly layer: Layer.Layer<NotifyEngine>
  readonly sends: Array<MemorySend>
  readonly closes: Array<MemoryClose>
  readonly logs: Array<MemoryLine>
  readonly lookups: Array<string>
}

export const NotifyEngineTest = (o: NotifyEngineTestOptions = {}): NotifyEngineTestRig => {
  const sends: Array<MemorySend> = []
  const closes: Array<MemoryClose> = []
  const logs: Array<MemoryLine> = []
  const lookups: Array<string> = []
  const deps = Layer.mergeAll(
    NotifierMemory(o.outcomes ?? ["ok"], sends, closes, { channel: o.channel ?? "notify-send", latencyMs: o.latencyMs }),
    SessionLookupMemory(o.known ?? new Map(), lookups),
    AppLogMemory(logs)
  )
  const layer = NotifyEngineShell(true, { sounds: o.sounds ?? true, fade: o.fade ?? true }).pipe(Layer.provide(deps))
  return { layer, sends, closes, logs, lookups }
}
