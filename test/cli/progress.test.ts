/** The sweeps' progress bar (SPEC §11.1): only on a TTY, without --json, and past the first chunk. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { progressBar } from "../../src/cli/sweep/progress.js"

const sink = () => {
  const out: Array<string> = []
  return { out, stream: { write: (s: string) => (out.push(s), true) } as unknown as NodeJS.WriteStream }
}

describe("progress bar", () => {
  it.effect("US-33 draws one updating line on stderr and ends it with a newline", () =>
    Effect.gen(function* () {
      const { out, stream } = sink()
      const bar = progressBar(true, stream)
      yield* bar.update(1000, 2500, "events")
      yield* bar.update(2500, 2500, "events")
      yield* bar.end
      expect(out).toEqual(["\r[############..................] 1,000/2,500 events", "\r[##############################] 2,500/2,500 events", "\n"])
    })
  )

  it.effect("US-33 draws nothing when disabled (no TTY, or --json), or when one chunk did it all", () =>
    Effect.gen(function* () {
      const off = sink()
      const disabled = progressBar(false, off.stream)
      yield* disabled.update(1, 2, "events")
      yield* disabled.end
      const single = sink()
      const once = progressBar(true, single.stream)
      yield* once.update(5, 5, "events")
      yield* once.end
      expect([...off.out, ...single.out]).toEqual([])
    })
  )
})
