/**
 * The live view's terminal over this process's standard streams: raw keys from stdin when it is a
 * terminal, the alternate screen on stdout, `resize` events; the terminal put back (cursor shown, main
 * screen, colours reset, cooked mode) however the view ends.
 */
import { Effect } from "effect"
import type { LiveTerminalService } from "../../services/view/LiveTerminal.js"

/** The terminal of `stdout` (this process's, or a stream a caller gives) with this process's stdin. */
export const liveTerminalProcess = (stdout: NodeJS.WriteStream | { readonly isTTY?: boolean; readonly columns?: number; readonly rows?: number; write: (s: string, cb: () => void) => unknown } = process.stdout, stdinIsTTY = process.stdin.isTTY === true): LiveTerminalService => ({
  screen: stdout.isTTY === true,
  size: Effect.sync(() => ({ cols: Math.max(20, stdout.columns ?? 80), rows: Math.max(5, stdout.rows ?? 24) })),
  take: (on) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const stdin = process.stdin
        const raw = stdinIsTTY && typeof stdin.setRawMode === "function"
        const onData = (chunk: Buffer | string) => on.keys(typeof chunk === "string" ? chunk : chunk.toString("utf8"))
        if (raw) {
          stdin.setRawMode(true)
          stdin.on("data", onData)
          stdin.resume()
        }
        process.stdout.on("resize", on.resized)
        stdout.write("\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J", () => {})
        return { raw, onData }
      }),
      ({ onData, raw }) =>
        Effect.sync(() => {
          process.stdout.off("resize", on.resized)
          if (raw) {
            process.stdin.off("data", onData)
            try {
              process.stdin.setRawMode(false)
            } catch {
              // the terminal is gone
            }
            process.stdin.pause()
          }
          try {
            // the cursor shown, the main screen back, colours reset: whatever ended the view
            stdout.write("\x1b[0m\x1b[?25h\x1b[?1049l", () => {})
          } catch {
            // stdout is closed: there is no terminal left to restore
          }
        })
    ).pipe(Effect.asVoid)
})
