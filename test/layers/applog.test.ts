import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { Cause, Context, Effect, Layer, Logger } from "effect"
import { AppLogMemory, type MemoryLine } from "../../src/layers/opencode/AppLogMemory.js"
import { AppLogSdk } from "../../src/layers/opencode/AppLogSdk.js"
import { logLine, LoggerAppLog, pinLogs, pinned } from "../../src/layers/opencode/LoggerAppLog.js"
import { LoggerStderr } from "../../src/layers/process/LoggerStderr.js"
import { AbortFailed } from "../../src/services/opencode/AbortClient.js"
import { AppLog } from "../../src/services/opencode/AppLog.js"

describe("the log through opencode's client", () => {
  it.effect("US-10 lines go through client.app.log as a method (the SDK reads its own this), below-level lines are dropped", () =>
    Effect.gen(function* () {
      const sent: Array<{ level: string; message: string; service: string; extra?: unknown }> = []
      const app = {
        prefix: "ok",
        log(this: { prefix: string }, o: { body: { service: string; level: string; message: string; extra?: unknown } }) {
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
        { service: "opencode-pool", level: "info", message: "reaper armed: every 30s", extra: { service: "opencode-pool" } },
        { service: "opencode-pool", level: "warn", message: "w", extra: { service: "opencode-pool" } }
      ])
      expect(writes).toEqual([])
    })
  )

  it.effect("US-10 every line carries the service name docs/OPERATIONS.md promises where opencode prints it: in `extra` (opencode 1.18.33 logs `message=<text> service=opencode-pool` from `extra`, and drops `service`)", () =>
    Effect.gen(function* () {
      // opencode 1.18.33's /log handler: Effect.log<level>(message).pipe(Effect.annotateLogs(extra ?? {})), as logfmt
      const printed: Array<string> = []
      const app = {
        log: (o: { body: { service: string; level: string; message: string; extra?: Record<string, unknown> } }) => {
          printed.push([`level=${o.body.level.toUpperCase()}`, `message=${o.body.message}`, ...Object.entries(o.body.extra ?? {}).map(([k, v]) => `${k}=${String(v)}`)].join(" "))
          return Promise.resolve({ data: true })
        }
      }
      const docs = readFileSync(new URL("../../docs/OPERATIONS.md", import.meta.url), "utf8")
      const promised = /^## Log lines \(opencode's log, service `([^`]+)`/m.exec(docs)?.[1]
      expect(promised).toBe("opencode-pool")
      yield* Effect.flatMap(AppLog, (l) => Effect.zipRight(l.log("info", "reaper armed: every 30s"), Effect.logWarning("w"))).pipe(Effect.provide(AppLogSdk({ app }, "info")))
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
      expect(printed).toEqual([`level=INFO message=reaper armed: every 30s service=${promised}`, `level=WARN message=w service=${promised}`])
    })
  )

  it.effect("US-10 a line's annotations (claim, session, model) follow the service name in `extra`, which they never replace; the text is unchanged; lines below the level are dropped before they are built", () =>
    Effect.gen(function* () {
      const sent: Array<{ level: string; message: string; service: string; extra?: Record<string, unknown> }> = []
      const app = { log: (o: { body: { service: string; level: string; message: string; extra?: Record<string, unknown> } }) => (sent.push(o.body), Promise.resolve({ data: true })) }
      let built = 0
      const costly = { toJSON: () => (built++, "x") }
      yield* Effect.all([
        Effect.logWarning("abort failed claim=p:c1 session=s1 attempt=1/3: HTTP 500").pipe(Effect.annotateLogs({ claim: "p:c1", session: "s1", model: "zen/a", service: "other" })),
        logLine({ level: "info", message: "cooling zen/a rate_limit strike 1 for 60s until 2026-01-15T09:01:00.000Z", annotations: { model: "zen/a" } }),
        Effect.logInfo("odd").pipe(Effect.annotateLogs({ n: 2, nested: { a: 1 } })),
        Effect.logDebug(costly)
      ]).pipe(Effect.provide(AppLogSdk({ app }, "info")))
      expect(sent).toEqual([
        { service: "opencode-pool", level: "warn", message: "abort failed claim=p:c1 session=s1 attempt=1/3: HTTP 500", extra: { service: "opencode-pool", claim: "p:c1", session: "s1", model: "zen/a" } },
        { service: "opencode-pool", level: "info", message: "cooling zen/a rate_limit strike 1 for 60s until 2026-01-15T09:01:00.000Z", extra: { service: "opencode-pool", model: "zen/a" } },
        { service: "opencode-pool", level: "info", message: "odd", extra: { service: "opencode-pool", n: 2, nested: '{"a":1}' } }
      ])
      expect(Object.keys(sent[0]!.extra!)).toEqual(["service", "claim", "session", "model"])
      expect(built).toBe(0)
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

describe("Effect.log* through the log (LoggerAppLog, LoggerStderr)", () => {
  it.effect("US-10 levels map to the log's four, a cause becomes its first line and stays typed, debug reaches the log", () =>
    Effect.gen(function* () {
      const lines: Array<MemoryLine> = []
      const failed = new AbortFailed({ problem: "other", detail: "session still running after abort\nsecond line" })
      yield* Effect.all([
        Effect.logDebug("d"),
        Effect.logInfo("reaper armed:", "every 30s"),
        Effect.logWarning("w"),
        Effect.logError("abort of ses_1 failed", Cause.fail(failed)),
        Effect.logError(Cause.fail(failed)),
        Effect.logFatal("f")
      ]).pipe(Effect.provide(AppLogMemory(lines)))
      expect(lines.map((l) => [l.level, l.message])).toEqual([
        ["debug", "d"],
        ["info", "reaper armed: every 30s"],
        ["warn", "w"],
        ["error", "abort of ses_1 failed: session still running after abort"],
        ["error", "session still running after abort"],
        ["error", "f"]
      ])
      expect(lines[0]!.details).toBeUndefined()
      expect(Cause.failureOption(lines[3]!.details!.cause)).toMatchObject({ _tag: "Some", value: failed })
    })
  )

  it.effect("US-10 the logger over the AppLog in context; a second log installed replaces the first, no line is logged twice", () =>
    Effect.gen(function* () {
      const first: Array<MemoryLine> = []
      const second: Array<MemoryLine> = []
      yield* Effect.logWarning("once").pipe(Effect.provide(AppLogMemory(second)), Effect.provide(AppLogMemory(first)))
      expect(first).toEqual([])
      expect(second).toEqual([{ level: "warn", message: "once" }])
      const lines: Array<MemoryLine> = []
      const service = Layer.succeed(AppLog, { log: (level, message) => Effect.sync(() => void lines.push({ level, message })) })
      yield* Effect.logInfo("via the tag").pipe(Effect.provide(LoggerAppLog.pipe(Layer.provide(service))))
      expect(lines).toEqual([{ level: "info", message: "via the tag" }])
    })
  )

  it.effect("US-10 the memory log records a line's annotations; a core line without any has none", () =>
    Effect.gen(function* () {
      const lines: Array<MemoryLine> = []
      yield* Effect.all([
        logLine({ level: "warn", message: "abort failed claim=p:c1 session=s1 attempt=1/3: x", annotations: { claim: "p:c1", session: "s1", model: "zen/a" } }),
        logLine({ level: "info", message: "reaper armed: every 30s" })
      ]).pipe(Effect.provide(AppLogMemory(lines)))
      expect(lines.map((l) => [l.level, l.message, l.details?.annotations])).toEqual([
        ["warn", "abort failed claim=p:c1 session=s1 attempt=1/3: x", { claim: "p:c1", session: "s1", model: "zen/a" }],
        ["info", "reaper armed: every 30s", undefined]
      ])
    })
  )

  it.effect("US-10 a core line's own annotations join the fiber's (Effect.annotateLogs), the line's winning for the same key; the CLI's logger and any other logger see its text", () =>
    Effect.gen(function* () {
      const lines: Array<MemoryLine> = []
      yield* logLine({ level: "info", message: "routed explore", annotations: { claim: "p:c2", model: "zen/a" } }).pipe(
        Effect.annotateLogs({ run: "r1", model: "fiber/model" }),
        Effect.provide(AppLogMemory(lines))
      )
      expect(lines.map((l) => [l.message, l.details?.annotations])).toEqual([["routed explore", { run: "r1", model: "zen/a", claim: "p:c2" }]])
      const writes: Array<string> = []
      const original = process.stderr.write.bind(process.stderr)
      process.stderr.write = ((chunk: string) => (writes.push(String(chunk)), true)) as typeof process.stderr.write
      try {
        yield* logLine({ level: "warn", message: "abort failed claim=p:c2", annotations: { claim: "p:c2" } }).pipe(Effect.provide(LoggerStderr))
      } finally {
        process.stderr.write = original
      }
      expect(writes).toEqual(["ocpool warn: abort failed claim=p:c2\n"])
      const seen: Array<string> = []
      const foreign = Logger.make(({ message }) => void seen.push(String((message as ReadonlyArray<unknown>)[0]), JSON.stringify(message)))
      yield* logLine({ level: "info", message: "cooling zen/a", annotations: { model: "zen/a" } }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, foreign)))
      expect(seen).toEqual(["cooling zen/a", '["cooling zen/a"]'])
    })
  )

  it.effect("US-10 a service built over the log keeps it (pinLogs): called from a fiber without the logger, its lines and those of the fibers it forks reach that log", () =>
    Effect.gen(function* () {
      class Probe extends Context.Tag("test/Probe")<Probe, { readonly run: (session: string) => Effect.Effect<void>; readonly tick: Effect.Effect<void> }>() {}
      const lines: Array<MemoryLine> = []
      const probe = Layer.effect(
        Probe,
        Effect.map(pinLogs, (pin) =>
          pinned(pin, {
            run: (session: string) => Effect.asVoid(Effect.fork(Effect.logDebug(`forked for ${session}`).pipe(Effect.annotateLogs({ session })))).pipe(Effect.zipLeft(Effect.yieldNow())),
            tick: Effect.logInfo("tick")
          })
        )
      ).pipe(Layer.provide(AppLogMemory(lines)))
      const service = yield* Effect.provide(Probe, probe)
      // outside the layer's runtime: Effect's default loggers and minimum level
      yield* Effect.promise(() => Effect.runPromise(Effect.zipRight(service.run("s1"), service.tick)))
      expect(lines.map((l) => [l.level, l.message, l.details?.annotations])).toEqual([
        ["debug", "forked for s1", { session: "s1" }],
        ["info", "tick", undefined]
      ])
    })
  )

  it.effect("US-10 the CLI's logger writes one line on stderr", () =>
    Effect.gen(function* () {
      const writes: Array<string> = []
      const original = process.stderr.write.bind(process.stderr)
      process.stderr.write = ((chunk: string) => (writes.push(String(chunk)), true)) as typeof process.stderr.write
      try {
        yield* Effect.logWarning("two\nlines").pipe(Effect.provide(LoggerStderr))
        yield* Effect.logError("sweep failed", Cause.fail(new AbortFailed({ problem: "other", detail: "busy" }))).pipe(Effect.provide(LoggerStderr))
      } finally {
        process.stderr.write = original
      }
      expect(writes).toEqual(["ocpool warn: two lines\n", "ocpool error: sweep failed: busy\n"])
    })
  )
})
