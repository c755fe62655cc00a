/**
 * The terminal the live view (`ocpool top`, `status --watch`, issue 24) takes over: its size, and the
 * screen taken (alternate screen, cursor hidden, raw keys, resizes) until a scope closes, everything put
 * back then. A service so that the view's loop runs in a test without a pseudo-terminal
 * (layers/view/LiveTerminalMemory.ts); the live one is layers/view/LiveTerminalProcess.ts.
 */
import { Context, type Effect, type Scope } from "effect"

export interface TerminalSize {
  readonly cols: number
  readonly rows: number
}

export interface LiveTerminalService {
  /** Whether the view may take the screen (a terminal on both ends, as far as the output goes). */
  readonly screen: boolean
  /** The size now (80x24 when the terminal does not say; at least 20x5). */
  readonly size: Effect.Effect<TerminalSize>
  /** Takes the screen until the scope closes: keys typed go to `keys`, a resize to `resized`. */
  readonly take: (on: { readonly keys: (text: string) => void; readonly resized: () => void }) => Effect.Effect<void, never, Scope.Scope>
}

export class LiveTerminal extends Context.Tag("opencode-pool/LiveTerminal")<LiveTerminal, LiveTerminalService>() {}
