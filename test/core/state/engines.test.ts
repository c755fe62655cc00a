/** The plugin engines on record (issue 33), pure: the liveness judgement and the line `ocpool status` and `doctor` show. */
import { describe, expect, it } from "@effect/vitest"
import { engineLive, enginesLine, type EngineView } from "../../../src/core/state/engines.js"
import { renderStatus, statusView } from "../../../src/core/status.js"

const NOW = Date.UTC(2026, 0, 5, 12, 0, 0)
const engine = (pid: number, more: Partial<EngineView> = {}): EngineView => ({ host: "devbox", pid, version: "0.1.0", backend: "sqlite", since: NOW - 180_000, live: true, local: true, ...more })

describe("the plugin engines on record", () => {
  it("US-46 on this host an engine lives while its pid does under its start token, whatever its age (no lease); elsewhere while its host's lease holds", () => {
    const here = { host: "devbox", pid: 7, startToken: "100" }
    expect(engineLive(here, undefined, { pidState: "alive", liveStartToken: "100" }, "devbox", NOW)).toBe(true)
    expect(engineLive(here, NOW - 86_400_000, { pidState: "alive", liveStartToken: "100" }, "devbox", NOW)).toBe(true)
    expect(engineLive(here, undefined, { pidState: "dead" }, "devbox", NOW)).toBe(false)
    expect(engineLive(here, undefined, { pidState: "alive", liveStartToken: "555" }, "devbox", NOW)).toBe(false)
    const there = { ...here, host: "other" }
    expect(engineLive(there, NOW + 1_000, {}, "devbox", NOW)).toBe(true)
    expect(engineLive(there, NOW - 1, {}, "devbox", NOW)).toBe(false)
    expect(engineLive(there, undefined, {}, "devbox", NOW)).toBe(false)
  })

  it("US-46 the line: live processes first (one per process, its projects counted, another host's named), the gone ones after; none running said so", () => {
    expect(enginesLine([], NOW)).toBe("plugin loaded in no running opencode process")
    expect(enginesLine([engine(1234)], NOW)).toBe("plugin loaded in 1 opencode process: pid 1234 (v0.1.0, sqlite, since 3m)")
    expect(
      enginesLine(
        [
          engine(99, { live: false, since: NOW - 7_500_000 }),
          engine(5678, { since: NOW - 12_000 }),
          engine(1234),
          engine(1234, { since: NOW - 60_000 }),
          engine(42, { host: "laptop", local: false, backend: "postgres", since: NOW - 3_700_000 })
        ],
        NOW
      )
    ).toBe(
      "plugin loaded in 3 opencode processes: pid 42@laptop (v0.1.0, postgres, since 1h01m), pid 1234 (2 projects, v0.1.0, sqlite, since 3m), pid 5678 (v0.1.0, sqlite, since 12s); gone: pid 99 (v0.1.0, sqlite, since 2h05m)"
    )
    expect(enginesLine([engine(99, { live: false })], NOW)).toBe("plugin loaded in no running opencode process; gone: pid 99 (v0.1.0, sqlite, since 3m)")
  })

  it("US-46 the status view shows the line under its title when it has the engines (ocpool status), and nothing when not (the plugin's own view); --json lists them", () => {
    const input = { origin: "pool.txt", slots: [], processes: [], cooldowns: new Map(), now: NOW, warnings: [] }
    const shown = statusView({ ...input, engines: [engine(1234, { version: "\u001b[31mx" })] })
    const lines = renderStatus(shown, { now: NOW, processes: [] }).split("\n")
    expect(lines.slice(0, 2)).toEqual(["opencode-pool: 0 claims in flight, 0 processes, 0 models cooling", "plugin loaded in 1 opencode process: pid 1234 (vx, sqlite, since 3m)"])
    expect(shown.engines?.map((e) => e.pid)).toEqual([1234])
    const plain = statusView(input)
    expect(plain.engines).toBeUndefined()
    expect(renderStatus(plain, { now: NOW, processes: [] })).not.toContain("plugin loaded")
  })
})
