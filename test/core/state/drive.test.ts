/** The pure parts of the fleet driver (issue 22; `node dist/dev-fleet-drive.js` since issue 34): the seeded pauses, the load and cooling a pick saw, its lines. */
import { describe, expect, it } from "@effect/vitest"
import { checkDriveFlags, coolingAt, parseDriveArgs, eventLine, fleetLoad, mulberry32, pauseMs, routedLine, type RawDriveFlags } from "../../../src/core/state/drive.js"
import type { Cooldown } from "../../../src/core/pool/cooldown.js"
import { CLAIM_TTL_MS } from "../../../src/core/constants.js"

const RAW: RawDriveFlags = { config: "c.json", picks: "40", hold: "2", seed: "7", pauseMs: "20", startAt: "1700000000000", coolAfter: undefined, coolModel: undefined, coolMs: undefined }

describe("fleet drive (pure)", () => {
  it("US-52 the same seed gives the same pauses, all within 0..P; another seed differs", () => {
    const a = mulberry32(42)
    const b = mulberry32(42)
    const xs = Array.from({ length: 200 }, () => pauseMs(a, 20))
    expect(Array.from({ length: 200 }, () => pauseMs(b, 20))).toEqual(xs)
    expect(xs.every((x) => Number.isInteger(x) && x >= 0 && x <= 20)).toBe(true)
    expect(new Set(xs).size).toBeGreaterThan(10)
    const c = mulberry32(43)
    expect(Array.from({ length: 200 }, () => pauseMs(c, 20))).not.toEqual(xs)
    expect(pauseMs(mulberry32(1), 0)).toBe(0)
  })

  it("US-52 flags: good ones parsed, the cool triple together, the first problem names its flag", () => {
    expect(checkDriveFlags(RAW)).toEqual({ _tag: "Value", value: { config: "c.json", picks: 40, hold: 2, seed: 7, pauseMs: 20, startAt: 1700000000000, cool: undefined } })
    expect(checkDriveFlags({ ...RAW, coolAfter: "5", coolModel: "p/a", coolMs: "20000" })).toMatchObject({ _tag: "Value", value: { cool: { after: 5, model: "p/a", ms: 20000 } } })
    expect(checkDriveFlags({ ...RAW, hold: "two" })).toEqual({ _tag: "Problem", message: '--hold "two" invalid (a positive integer)' })
    expect(checkDriveFlags({ ...RAW, coolMs: "5" })).toEqual({ _tag: "Problem", message: "--cool-model and --cool-ms need --cool-after" })
  })

  it("US-52 a pick's load counts live claims of its model, own and peers', and the cooling models are those still ahead", () => {
    const now = 1_000_000
    const c = (model: string, heartbeatAt = now) => ({ model, heartbeatAt })
    expect(fleetLoad([c("p/a"), c("p/b"), c("p/a", now - CLAIM_TTL_MS - 1)], [{ claims: [c("p/a"), c("p/b")] }, { claims: [c("p/a")] }], "p/a", now)).toBe(3)
    const cd = (model: string, until: number): Cooldown => ({ model, until, reason: "rate_limit", strikes: 1, scope: "model", since: now - 1, source: "header" })
    expect(coolingAt(new Map([["q/z", cd("q/z", now + 5)], ["p/a", cd("p/a", now + 1)], ["p/b", cd("p/b", now)]]), now)).toEqual(["p/a", "q/z"])
  })

  it("US-52 the engine's routed line gives the slot, model, cap and pass; the lines keep their documented keys in order", () => {
    expect(routedLine("routed explore -> explore-2 slot=2 model=p/b load=2/4 pass=second")).toEqual({ agent: "explore-2", slot: 2, model: "p/b", cap: 4, pass: "second" })
    expect(routedLine("cooling p/a rate_limit strike 1 for 20s")).toBeUndefined()
    expect(eventLine({ ev: "pick", at: 1.5, cooling: ["p/a"], cap: 2, load: 1, pass: "first", slot: 1, model: "p/b", key: "k", host: "h" })).toBe(
      '{"ev":"pick","host":"h","key":"k","model":"p/b","slot":1,"pass":"first","load":1,"cap":2,"cooling":["p/a"],"at":1.5}'
    )
    expect(eventLine({ ev: "done", fallbacks: 0, failOpens: 1, picks: 3, host: "h" })).toBe('{"ev":"done","host":"h","picks":3,"failOpens":1,"fallbacks":0}')
    expect(eventLine({ ev: "cool", at: 2, until: 9, model: "p/a", host: "h" })).toBe('{"ev":"cool","host":"h","model":"p/a","until":9,"at":2}')
  })

  it("US-52 the argv is read as `ocpool fleet drive` read it: --flag VALUE or --flag=VALUE, each once, help anywhere, the first problem", () => {
    expect(parseDriveArgs(["--config", "c.json", "--picks=40", "--cool-ms", "-5"])).toEqual({
      _tag: "Raw",
      raw: { config: "c.json", picks: "40", hold: undefined, seed: undefined, pauseMs: undefined, startAt: undefined, coolAfter: undefined, coolModel: undefined, coolMs: "-5" }
    })
    expect(parseDriveArgs(["--picks", "1", "-h"])).toEqual({ _tag: "Help" })
    expect(parseDriveArgs(["--help", "--nope"])).toEqual({ _tag: "Usage", message: "fleet drive: unknown flag '--nope'" })
    expect(parseDriveArgs(["--seed"])).toEqual({ _tag: "Usage", message: "fleet drive: --seed needs a value (--seed S)" })
    expect(parseDriveArgs(["--seed", "--hold", "1"])).toEqual({ _tag: "Usage", message: "fleet drive: --seed needs a value (--seed S)" })
    expect(parseDriveArgs(["--start-at="])).toEqual({ _tag: "Usage", message: "fleet drive: --start-at needs a value (--start-at EPOCH_MS)" })
    expect(parseDriveArgs(["--hold", "1", "--hold=2"])).toEqual({ _tag: "Usage", message: "fleet drive: --hold given more than once" })
    expect(parseDriveArgs(["--hold", "1", "extra"])).toEqual({ _tag: "Usage", message: "fleet drive: unexpected argument 'extra'" })
    expect(parseDriveArgs([])).toEqual({ _tag: "Raw", raw: expect.objectContaining({ config: undefined }) })
  })
})
