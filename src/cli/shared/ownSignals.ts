/**
 * A command that owns SIGINT/SIGTERM/SIGHUP while it runs, as a shell does for its job: the runtime's
 * own listeners (interrupt the main fiber, exit 1) are set aside and put back when the scope closes,
 * and each signal calls `on` with the exit code it stands for (128 + its number). `ocpool run` and the
 * live view use it.
 */
import { Effect } from "effect"

export const OWNED_SIGNALS: ReadonlyArray<readonly [NodeJS.Signals, number]> = [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129]
]

export const ownSignals = (on: (code: number) => void) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      OWNED_SIGNALS.map(([signal, code]) => {
        const others = process.listeners(signal)
        for (const l of others) process.off(signal, l)
        const h = () => on(code)
        process.on(signal, h)
        return { signal, h, others }
      })
    ),
    (owned) =>
      Effect.sync(() =>
        owned.forEach(({ signal, h, others }) => {
          process.off(signal, h)
          for (const l of others) process.on(signal, l)
        })
      )
  )
