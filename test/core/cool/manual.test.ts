/** Cooldowns by hand (issue 32): what `ocpool cool clear` ends and `cool set` benches, and how every process's own record honours a clear. */
import { describe, expect, it } from "@effect/vitest"
import { benchCooldown, checkModel, coolingNow, planClear } from "../../../src/core/cool/manual.js"
import { mergeCleared, mergePeer, type Cooldown } from "../../../src/core/pool/cooldown.js"
import { decodeCooldown, encodeCooldown, isCooldownExpired } from "../../../src/core/pool/cooldownFile.js"
import { STRIKE_DECAY_MS } from "../../../src/core/constants.js"
import { peerCooling } from "../../../src/core/engine/turn.js"
import { decodeLine, InputError } from "../../../src/core/trace/input.js"

const NOW = 1_796_115_600_000
const cool = (model: string, until: number, strikes = 2, since = NOW - 60_000): Cooldown => ({ model, reason: "rate_limit", strikes, scope: "model", since, until, source: "backoff" })
const table = (...cs: ReadonlyArray<Cooldown>) => new Map(cs.map((c) => [c.model, c]))

describe("ocpool cool clear: the plan (issue 32)", () => {
  const t = table(cool("zen/a", NOW + 600_000), cool("zen/b", NOW + 60_000, 1), cool("go/c", NOW + 3_600_000, 3), cool("go/over", NOW - 1))

  it("US-4 named models: those cooling end (a marker each, ended at now, strikes kept); one not cooling is named", () => {
    const p = planClear(t, { _tag: "Models", models: ["zen/a", "go/over", "nope/x"] }, false, NOW)
    expect(p.cleared.map((c) => c.model)).toEqual(["zen/a"])
    expect(p.notCooling).toEqual(["go/over", "nope/x"])
    expect(p.markers).toEqual([{ model: "zen/a", reason: "rate_limit", strikes: 2, scope: "model", since: NOW, until: NOW, source: "cleared", ended: NOW + 600_000 }])
  })

  it("US-4 --provider ends every cooling model of that provider; --all every one; --reset-strikes puts their strikes to 0", () => {
    expect(planClear(t, { _tag: "Provider", provider: "zen" }, false, NOW).cleared.map((c) => c.model)).toEqual(["zen/a", "zen/b"])
    const all = planClear(t, { _tag: "All" }, true, NOW)
    expect(all.cleared.map((c) => c.model)).toEqual(["go/c", "zen/a", "zen/b"])
    expect(all.markers.map((m) => m.strikes)).toEqual([0, 0, 0])
    expect(all.notCooling).toEqual([])
  })

  it("US-4 a marker is not cooling, is kept as long as what it ended would have been, and is never cleared again", () => {
    const [marker] = planClear(t, { _tag: "Models", models: ["go/c"] }, false, NOW).markers
    expect(coolingNow(table(marker!), NOW)).toEqual([])
    expect(isCooldownExpired(marker!, NOW + 3_600_000 + STRIKE_DECAY_MS - 1)).toBe(false)
    expect(isCooldownExpired(marker!, NOW + 3_600_000 + STRIKE_DECAY_MS + 1)).toBe(true)
    expect(planClear(table(marker!), { _tag: "All" }, false, NOW + 1).cleared).toEqual([])
    // its record round-trips
    expect(decodeCooldown(encodeCooldown(marker!))).toEqual(marker)
  })
})

describe("every process honours a clear (issue 32)", () => {
  it("US-4 this process's own record that began before the clear ends at it, strikes as the clear left them; one begun after stands", () => {
    const own = table(cool("zen/a", NOW + 600_000, 3, NOW - 10_000))
    const ended = mergeCleared(own, "zen/a", NOW - 5_000, 3, NOW)
    expect(ended.get("zen/a")).toMatchObject({ until: NOW - 5_000, strikes: 3 })
    expect(mergeCleared(own, "zen/a", NOW - 5_000, 0, NOW).get("zen/a")?.strikes).toBe(0)
    expect(mergeCleared(own, "zen/a", NOW - 20_000, 0, NOW)).toBe(own)
    expect(mergeCleared(own, "zen/other", NOW - 5_000, 0, NOW)).toBe(own)
  })

  it("US-4 a cleared marker in the shared table reaches a trace line only while this process still holds what it ended; merged, it ends it", () => {
    const own = table(cool("zen/a", NOW + 600_000, 2, NOW - 10_000))
    const marker: Cooldown = { model: "zen/a", reason: "rate_limit", strikes: 2, scope: "model", since: NOW - 5_000, until: NOW - 5_000, source: "cleared", ended: NOW + 600_000 }
    const lines = peerCooling(own, table(marker), NOW)
    expect(lines).toEqual([{ model: "zen/a", until: NOW - 5_000, reason: "rate_limit", strikes: 2, cleared: true }])
    const merged = lines!.reduce((acc, p) => mergePeer(acc, p, NOW), own as ReadonlyMap<string, Cooldown>)
    expect(merged.get("zen/a")!.until).toBe(NOW - 5_000)
    expect(peerCooling(merged, table(marker), NOW)).toBeUndefined()
  })

  it("US-45 a trace line's peerCooling carries `cleared: true` and nothing else there", () => {
    const base = { type: "spawn", at: NOW, claim: "p:c1", base: "explore" }
    const ok = decodeLine(JSON.stringify({ ...base, peerCooling: [{ model: "zen/a", until: NOW - 5, reason: "manual", cleared: true }] }))
    expect(ok).not.toBeInstanceOf(InputError)
    expect(decodeLine(JSON.stringify({ ...base, peerCooling: [{ model: "zen/a", until: NOW - 5, reason: "quota", cleared: false }] }))).toBeInstanceOf(InputError)
  })
})

describe("ocpool cool set (issue 32)", () => {
  it("US-4 a model benched by hand cools for the time given, reason manual, with its note; the strikes it had are kept", () => {
    const b = benchCooldown(table(cool("zen/a", NOW - 1, 3)), "zen/a", 600_000, "  top-up pending  ", NOW)
    expect(b).toEqual({ model: "zen/a", reason: "manual", strikes: 3, scope: "model", since: NOW, until: NOW + 600_000, source: "manual", note: "top-up pending" })
    expect(benchCooldown(table(), "go/b", 1_000, undefined, NOW)).not.toHaveProperty("note")
    expect(decodeCooldown(encodeCooldown(b))).toEqual(b)
  })

  it("US-4 a model name is provider/model without control characters", () => {
    expect(checkModel("zen/alpha")).toBeUndefined()
    expect(checkModel("openrouter/meta/llama:free")).toBeUndefined()
    for (const bad of ["alpha", "/x", "zen/", "zen/a b", "zen/\u001b[31m", "x/" + "y".repeat(300)]) expect(checkModel(bad)).toBeDefined()
  })
})
