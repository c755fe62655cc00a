/** A state directory for `ocpool metrics` tests: counts, a cooldown and a claim written through the real SQLite port, as the plugin writes them. */
import { Effect, Layer } from "effect"
import { chmodSync, mkdtempSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { count, observeWait, type Count } from "../../src/core/metrics/counters.js"
import { sharedStateLayer } from "../../src/layers/state/sharedStateLayer.js"
import { SharedState, type Commit } from "../../src/services/state/SharedState.js"
import { StateDir } from "../../src/services/state/StateDir.js"
import { makeClaim } from "../helpers.js"

/** A provider name no exposition may break on: quotes, a backslash, a newline, NUL, a lone surrogate. */
export const HOSTILE = 'or "x"\\\n\u0000\uD800'

export const METRIC_COUNTS: ReadonlyArray<Count> = [
  count("routes_total", ["explore", "first"]),
  count("routes_total", ["explore", "first"]),
  count("routes_total", ["general", "overflow"]),
  count("limits_total", ["openrouter", "rate_limit"], 3),
  count("limits_total", [HOSTILE, "quota"]),
  count("fail_opens_total"),
  ...observeWait("heavy", 0.5),
  ...observeWait("heavy", 42),
  ...observeWait("heavy", 7200)
]

const portOn = (dir: string) =>
  sharedStateLayer({ backend: "sqlite", lockWaitMs: 5_000 }).pipe(Layer.provide(Layer.succeed(StateDir, { dir, trusted: true, pid: process.pid, host: hostname(), startTime: null })))

/** `commit` written to `dir`'s state through the port, as a plugin's commit is. */
export const commitInto = (dir: string, commit: Commit): Promise<void> =>
  Effect.runPromise(Effect.flatMap(SharedState, (s) => s.commit(Date.now(), commit)).pipe(Effect.provide(portOn(dir)), Effect.scoped))

/** `counts` added to `dir`'s counters, through the port, as a plugin's commit adds them. */
export const countInto = (dir: string, counts: ReadonlyArray<Count>): Promise<void> => commitInto(dir, { cool: [], uncool: [], counts })

/** A fresh trusted state directory holding `counts`, a cooldown of `fakeB/pool-b` (90 s left) and one live claim of this process. */
export const metricsStateDir = async (counts: ReadonlyArray<Count> = METRIC_COUNTS): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-metrics-"))
  chmodSync(dir, 0o700)
  const now = Date.now()
  await Effect.runPromise(
    Effect.flatMap(SharedState, (s) =>
      s.commit(now, {
        claims: { claims: [makeClaim("c1", "fakeA/pool-a", "explore", now)], reaped: 0 },
        cool: [{ model: "fakeB/pool-b", reason: "rate_limit", strikes: 1, scope: "model", since: now, until: now + 90_000, source: "backoff" }],
        uncool: [],
        counts
      })
    ).pipe(Effect.provide(portOn(dir)), Effect.scoped)
  )
  return dir
}
