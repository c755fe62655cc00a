import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { AppLogSdk } from "../../src/layers/opencode/AppLogSdk.js"
import { AppLog } from "../../src/services/opencode/AppLog.js"

describe("the log through opencode's client", () => {
  it.effect("US-10 lines go through client.app.log as a method (the SDK reads its own this), below-level lines are dropped", () =>
    Effect.gen(function* () {
      const sent: Array<{ level: string; message: string; service: string }> = []
      const app = {
        prefix: "ok",
        log(this: { prefix: string }, o: { body: { service: string; level: string; message: string } }) {
          if (this?.prefix !== "ok") throw new Error("lost this")
          sent.push(o.body)
          return Promise.resolve({ data: true })
        }
      }
      const writes: Array<string> = []
      const original = process.stderr.write.bind(process.stderr)
      process.stderr.write = ((chunk: string) => (writes.push(String(chunk)), true)) as typeof process.stderr.write
      try {
        yield* Effect.flatMap(AppLog, (l) => Effect.all([l.log("debug", "hidden"), l.log("info", "reaper armed: every 30s"), l.log("warn", "w")])).pipe(
          Effect.provide(AppLogSdk({ app } as never, "info"))
        )
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
      } finally {
        process.stderr.write = original
      }
      expect(sent).toEqual([
        { service: "opencode-pool", level: "info", message: "reaper armed: every 30s" },
        { service: "opencode-pool", level: "warn", message: "w" }
      ])
      expect(writes).toEqual([])
    })
  )

  it.effect("US-10 without a client, or when the call fails, the line goes to stderr", () =>
    Effect.gen(function* () {
      const writes: Array<string> = []
      const original = process.stderr.write.bind(process.stderr)
      process.stderr.write = ((chunk: string) => (writes.push(String(chunk)), true)) as typeof process.stderr.write
      try {
        yield* Effect.flatMap(AppLog, (l) => l.log("warn", "one")).pipe(Effect.provide(AppLogSdk(undefined, "info")))
        yield* Effect.flatMap(AppLog, (l) => l.log("error", "two")).pipe(Effect.provide(AppLogSdk({ app: { log: () => Promise.reject(new Error("down")) } }, "info")))
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
      } finally {
        process.stderr.write = original
      }
      expect(writes).toEqual(["opencode-pool warn: one\n", "opencode-pool error: two\n"])
    })
  )
})
