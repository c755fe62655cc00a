/**
 * The live view's terminal in memory (tests): a fixed size, keys and resizes a test sends, and a record
 * of whether the screen is taken and how often it was put back.
 */
import { Effect, Layer } from "effect"
import { LiveTerminal, type TerminalSize } from "../../services/view/LiveTerminal.js"

export interface MemoryTerminal {
  readonly layer: Layer.Layer<LiveTerminal>
  /** Types `text` (delivered once the screen is taken; dropped before). */
  readonly type: (text: string) => void
  /** Resizes to `size`. */
  readonly resize: (size: TerminalSize) => void
  /** Whether the screen is taken now, and how many times it was put back. */
  readonly taken: () => boolean
  readonly restored: () => number
}

export const liveTerminalMemory = (size: TerminalSize = { cols: 100, rows: 30 }): MemoryTerminal => {
  let current = size
  let listeners: { readonly keys: (text: string) => void; readonly resized: () => void } | undefined
  let restored = 0
  const service = {
    screen: true,
    size: Effect.sync(() => current),
    take: (on: { readonly keys: (text: string) => void; readonly resized: () => void }) =>
      Effect.acquireRelease(
        Effect.sync(() => void (listeners = on)),
        () => Effect.sync(() => ((listeners = undefined), restored++))
      )
  }
  return {
    layer: Layer.succeed(LiveTerminal, service),
    type: (text) => listeners?.keys(text),
    resize: (s) => ((current = s), listeners?.resized()),
    taken: () => listeners !== undefined,
    restored: () => restored
  }
}
