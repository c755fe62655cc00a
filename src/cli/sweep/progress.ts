/** A one-line progress bar on stderr (SPEC §11.1): only on a TTY, without `--json`, and past the first chunk. */
import { Effect } from "effect"

export interface Progress {
  readonly update: (done: number, total: number, unit: string) => Effect.Effect<void>
  readonly end: Effect.Effect<void>
}

const WIDTH = 30

export const progressBar = (enabled: boolean, stream: NodeJS.WriteStream = process.stderr): Progress => {
  let drawn = false
  return {
    update: (done, total, unit) =>
      Effect.sync(() => {
        if (!enabled || total <= 0 || (!drawn && done >= total)) return
        const filled = Math.round((done / total) * WIDTH)
        stream.write(`\r[${"#".repeat(filled)}${".".repeat(WIDTH - filled)}] ${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")} ${unit}`)
        drawn = true
      }),
    end: Effect.sync(() => {
      if (drawn) stream.write("\n")
      drawn = false
    })
  }
}
