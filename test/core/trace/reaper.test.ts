import { describe, expect, it } from "@effect/vitest"
import { lines, pool, routes, run, T0, trace } from "../../helpers.js"
import { updateClaim, type Claim } from "../../../src/core/pool/claims.js"
import { firstTokenCools, missedFirstToken } from "../../../src/core/pool/reaper.js"

const MIN = 60_000
const P = pool(T0, ["zen/alpha", 1], ["go/gamma", 1])
const spawn = (at: number, claim: string, extra: Record<string, unknown> = {}) => ({ at, type: "spawn", claim, base: "explore", ...extra })
const bind = (at: number, claim: string, session: string, extra: Record<string, unknown> = {}) => ({ at, type: "bind", claim, session, ...extra })
const sweep = (at: number, extra: Record<string, unknown> = {}) => ({ at, type: "sweep", ...extra })

describe("hang recovery in replay (SPEC §8, TRACE.md §6)", () => {
  it("US-8 a bound claim silent for 9 min is aborted, its model cools 10 min for hang, and it is released", () => {
    expect(lines(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), spawn(T0 + 9 * MIN, "c2")))).toEqual([
      `{"at":${T0},"type":"route","claim":"c1","base":"explore","slot":1,"model":"zen/alpha","agent":"explore-1","pass":"first"}`,
      `{"at":${T0 + 9 * MIN},"type":"abort","claim":"c1","session":"s1","ok":true}`,
      `{"at":${T0 + 9 * MIN},"type":"cool","models":["zen/alpha"],"scope":"model","reason":"hang","until":${T0 + 19 * MIN},"strike":0}`,
      `{"at":${T0 + 9 * MIN},"type":"release","claim":"c1","cooled":true,"reason":"hung"}`,
      `{"at":${T0 + 9 * MIN},"type":"route","claim":"c2","base":"explore","slot":2,"model":"go/gamma","agent":"explore-2","pass":"first"}`
    ])
  })

  it("US-8 a bound claim 4 min old and silent is left alone", () => {
    expect(run(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), sweep(T0 + 4 * MIN)))).toHaveLength(1)
  })

  it("US-8 activity every 2 min for 24 min keeps the claim alive through every sweep", () => {
    const body: Array<Record<string, unknown>> = [P, spawn(T0, "c1"), bind(T0, "c1", "s1")]
    for (let t = 2; t <= 24; t += 2) body.push({ at: T0 + t * MIN, type: "activity", session: "s1" }, sweep(T0 + t * MIN + 30_000))
    expect(run(trace(...body)).filter((d) => d.type !== "route")).toEqual([])
  })

  it("US-8 two hung children are both aborted by one sweep, in acquisition order", () => {
    const ds = run(trace(P, spawn(T0, "a"), spawn(T0 + 1, "b"), bind(T0 + 2, "a", "sa"), bind(T0 + 3, "b", "sb"), sweep(T0 + 10 * MIN)))
    expect(ds.filter((d) => d.type === "abort").map((d) => d.type === "abort" && d.claim)).toEqual(["a", "b"])
    expect(ds.filter((d) => d.type === "release").length).toBe(2)
  })

  it("US-8 a hang on a model cooling from a stated 30-min reset keeps the stated end and adds no strike", () => {
    const ds = run(
      trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), { at: T0 + 1, type: "limit", text: "Rate limit; resets in 30min", model: "zen/alpha" }, sweep(T0 + 9 * MIN), { at: T0 + 9 * MIN, type: "status" })
    )
    expect(ds.filter((d) => d.type === "cool").map((d) => d.type === "cool" && d.reason)).toEqual(["rate_limit"])
    expect(ds.at(-1)).toMatchObject({ type: "status", slots: [{ cooling: { until: T0 + 1 + 30 * MIN, reason: "rate_limit" } }, { cooling: null }] })
  })

  it("US-8 retry statuses are not activity: a claim whose child only retries for 3 min past 5 min of age is reaped", () => {
    const body: Array<Record<string, unknown>> = [P, spawn(T0, "c1"), bind(T0 + 2 * MIN + 30_000, "c1", "s1")]
    for (let t = 3 * MIN; t <= 5 * MIN + 30_000; t += 10_000) body.push({ at: T0 + t, type: "retry", session: "s1", message: "Connection reset by server", next: T0 + t + 2_000 })
    body.push(sweep(T0 + 5 * MIN + 31_000))
    const ds = run(trace(...body))
    expect(ds.filter((d) => d.type === "ignore").length).toBeGreaterThan(5)
    expect(ds.at(-1)).toMatchObject({ type: "release", reason: "hung" })
  })

  it("US-9 a slot whose only claims were reaped has load 0 before the next claim", () => {
    const ds = run(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), sweep(T0 + 9 * MIN), { at: T0 + 9 * MIN, type: "status" }))
    expect(ds.at(-1)).toMatchObject({ type: "status", slots: [{ load: 0 }, { load: 0 }], reaped: 1 })
  })

  it("US-9 a claim with activity at t0+8 min counts as load at t0+15 min and not at t0+19 min", () => {
    const ds = run(
      trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), { at: T0 + 8 * MIN, type: "activity", session: "s1" }, { at: T0 + 15 * MIN, type: "status" }, { at: T0 + 19 * MIN, type: "status" })
    )
    expect(ds.filter((d) => d.type === "status").map((d) => d.type === "status" && d.slots[0]!.load)).toEqual([1, 0])
  })

  it("US-9 an unbound claim older than 5 min is released as unbound, with no abort and no cooldown", () => {
    expect(lines(trace(P, spawn(T0, "c1"), sweep(T0 + 5 * MIN + 1)))).toEqual([
      `{"at":${T0},"type":"route","claim":"c1","base":"explore","slot":1,"model":"zen/alpha","agent":"explore-1","pass":"first"}`,
      `{"at":${T0 + 5 * MIN + 1},"type":"release","claim":"c1","cooled":false,"reason":"unbound"}`
    ])
  })

  it("US-9 a back-filled child (bind with activity:false) is measured from the claim's acquisition and aborted", () => {
    const ds = run(trace(P, spawn(T0, "c1"), bind(T0 + 9 * MIN, "c1", "s1", { activity: false }), sweep(T0 + 9 * MIN)))
    expect(ds.slice(1).map((d) => d.type)).toEqual(["abort", "cool", "release"])
  })

  it("US-10 a failed abort keeps the claim loaded; the third failure releases it as gave_up with no cooldown and counts a reap", () => {
    const ds = run(
      trace(
        P,
        spawn(T0, "c1"),
        bind(T0, "c1", "s1"),
        sweep(T0 + 9 * MIN, { abort: "fail" }),
        { at: T0 + 9 * MIN, type: "status" },
        sweep(T0 + 10 * MIN, { aborts: { c1: "fail" } }),
        sweep(T0 + 11 * MIN, { abort: "fail" }),
        { at: T0 + 11 * MIN, type: "status" }
      )
    )
    expect(ds.filter((d) => d.type === "abort").map((d) => d.type === "abort" && d.ok)).toEqual([false, false, false])
    expect(ds.filter((d) => d.type === "cool")).toEqual([])
    expect(ds[2]).toMatchObject({ type: "status", slots: [{ load: 1 }, {}], reaped: 0 })
    expect(ds.at(-2)).toMatchObject({ type: "release", reason: "gave_up", cooled: false })
    expect(ds.at(-1)).toMatchObject({ type: "status", reaped: 1, slots: [{ load: 0, cooling: null }, {}] })
  })

  it("US-31 a failed abort after a signal is retried by later sweeps whatever the claim's age; success releases as signal, not a reap", () => {
    const ds = run(
      trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), { at: T0 + 1_000, type: "limit", text: "limit reached", session: "s1", abort: "fail" }, sweep(T0 + 2_000), { at: T0 + 3_000, type: "status" })
    )
    expect(ds.slice(1).map((d) => d.type)).toEqual(["cool", "abort", "abort", "release", "status"])
    expect(ds[4]).toMatchObject({ type: "release", reason: "signal" })
    expect(ds[5]).toMatchObject({ type: "status", reaped: 0 })
  })

  it("US-31 three failed aborts after a signal: released as gave_up on the third failure", () => {
    const ds = run(
      trace(
        P,
        spawn(T0, "c1"),
        bind(T0, "c1", "s1"),
        { at: T0 + 1_000, type: "limit", text: "limit reached", session: "s1", abort: "fail" },
        sweep(T0 + 2_000, { abort: "fail" }),
        sweep(T0 + 3_000, { abort: "fail" }),
        sweep(T0 + 4_000)
      )
    )
    expect(ds.filter((d) => d.type === "abort")).toHaveLength(3)
    expect(ds.at(-1)).toMatchObject({ type: "release", reason: "gave_up" })
  })

  it("US-43 a pooled child blocked on a person for 20 min is never aborted, its claim stays loaded", () => {
    const body: Array<Record<string, unknown>> = [P, spawn(T0, "c1"), bind(T0, "c1", "s1")]
    for (let t = 1; t <= 20; t++) body.push(sweep(T0 + t * MIN, { blocked: ["c1"] }))
    body.push({ at: T0 + 20 * MIN, type: "status" })
    const ds = run(trace(...body))
    expect(ds.map((d) => d.type)).toEqual(["route", "status"])
    expect(ds[1]).toMatchObject({ slots: [{ load: 1 }, {}] })
  })

  it("US-43 once the ask is answered and the child stays silent, a sweep 3 min later reaps it", () => {
    const body: Array<Record<string, unknown>> = [P, spawn(T0, "c1"), bind(T0, "c1", "s1"), sweep(T0 + 10 * MIN, { blocked: ["c1"] }), { at: T0 + 10 * MIN, type: "activity", session: "s1" }]
    body.push(sweep(T0 + 12 * MIN), sweep(T0 + 13 * MIN))
    const ds = run(trace(...body))
    expect(ds.slice(1).map((d) => `${d.at - T0}:${d.type}`)).toEqual([`${13 * MIN}:abort`, `${13 * MIN}:cool`, `${13 * MIN}:release`])
  })

  it("US-43 an unbound claim listed as blocked is treated as unbound", () => {
    expect(run(trace(P, spawn(T0, "c1"), sweep(T0 + 6 * MIN, { blocked: ["c1"] }))).at(-1)).toMatchObject({ type: "release", reason: "unbound" })
  })

  it("US-47 a spinning claim is aborted, cooled for hang and released as hung before the ordinary sweep, even when blocked", () => {
    const ds = run(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), sweep(T0 + 10_000, { spinning: ["c1"], blocked: ["c1"] }), spawn(T0 + 11_000, "c2"), { at: T0 + 12_000, type: "status" }))
    expect(ds.slice(1, 4).map((d) => d.type)).toEqual(["abort", "cool", "release"])
    expect(ds[2]).toMatchObject({ reason: "hang", until: T0 + 10_000 + 10 * MIN })
    expect(ds[3]).toMatchObject({ reason: "hung" })
    expect(routes(ds).at(-1)).toMatchObject({ slot: 2 })
    expect(ds.at(-1)).toMatchObject({ reaped: 1 })
  })

  it("US-47 a failed spinning abort keeps the claim pending with no cooldown and no second attempt in that sweep", () => {
    const ds = run(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), sweep(T0 + 10 * MIN, { spinning: ["c1"], abort: "fail" }), sweep(T0 + 10 * MIN + 1)))
    expect(ds.slice(1).map((d) => d.type)).toEqual(["abort", "abort", "cool", "release"])
    expect(ds.at(-1)).toMatchObject({ reason: "hung" })
  })
})

describe("signals on pooled sessions in replay (SPEC §7.8)", () => {
  const bound = [P, spawn(T0, "c1", { session: "p1" }), bind(T0 + 1, "c1", "s1")]

  it("US-31 'limit reached' on a pooled session cools slot 1's model, aborts the session and releases the claim", () => {
    const ds = run(trace(...bound, { at: T0 + 2, type: "limit", text: "limit reached", session: "s1" }))
    expect(ds.slice(1)).toEqual([
      { type: "cool", at: T0 + 2, models: ["zen/alpha"], scope: "model", reason: "rate_limit", until: T0 + 2 + MIN, strike: 1 },
      { type: "abort", at: T0 + 2, claim: "c1", session: "s1", ok: true },
      { type: "release", at: T0 + 2, claim: "c1", cooled: true, reason: "signal" }
    ])
  })

  it("US-31 'context limit reached' cools nothing, aborts nothing, and the claim stays held", () => {
    const ds = run(trace(...bound, { at: T0 + 2, type: "limit", text: "context limit reached", session: "s1" }, { at: T0 + 3, type: "status" }))
    expect(ds.slice(1).map((d) => d.type)).toEqual(["ignore", "status"])
    expect(ds.at(-1)).toMatchObject({ slots: [{ load: 1, cooling: null }, {}] })
  })

  it("US-31 a 503 cools for exactly 30 s at strike 0 and aborts the session", () => {
    const ds = run(trace(...bound, { at: T0 + 2, type: "limit", text: "Service Unavailable", status: 503, session: "s1" }))
    expect(ds[1]).toMatchObject({ reason: "outage", until: T0 + 2 + 30_000, strike: 0 })
    expect(ds[2]).toMatchObject({ type: "abort", ok: true })
  })

  it("US-31 after an abort, the caller's next spawn routes to a slot that is not cooling", () => {
    const ds = run(trace(...bound, { at: T0 + 2, type: "limit", text: "limit reached", session: "s1" }, spawn(T0 + 3, "c2", { session: "p1" })))
    expect(routes(ds).at(-1)).toMatchObject({ slot: 2, model: "go/gamma" })
  })

  it("US-42 a retry 'Free usage exceeded' on a pooled session cools the provider, aborts, releases; the re-spawn avoids it", () => {
    const P3 = pool(T0, ["zen/alpha", 1], ["zen/beta", 1], ["go/gamma", 1])
    const ds = run(
      trace(P3, spawn(T0, "c1"), bind(T0 + 1, "c1", "s1"), { at: T0 + 2, type: "retry", session: "s1", message: "Free usage exceeded, subscribe to Go", next: T0 + 3_002 }, spawn(T0 + 4, "c2"))
    )
    expect(ds.slice(1).map((d) => d.type)).toEqual(["cool", "abort", "release", "route"])
    expect(ds[1]).toMatchObject({ models: ["zen/alpha", "zen/beta"], scope: "provider", reason: "quota" })
    expect(ds.at(-1)).toMatchObject({ slot: 3 })
  })

  it("US-42 a retry on a non-pooled session naming provider zen cools zen and aborts nothing", () => {
    const ds = run(trace(P, { at: T0 + 2, type: "retry", session: "root", message: "Rate limited", next: T0 + 5_000, provider: "zen" }))
    expect(ds.map((d) => d.type)).toEqual(["cool"])
  })

  it("US-44 a withdrawn model cools alone for 6 h and the status view shows its end", () => {
    const ds = run(trace(...bound, { at: T0 + 2, type: "limit", text: "Model not found", session: "s1" }, { at: T0 + 3, type: "status" }))
    expect(ds[1]).toMatchObject({ models: ["zen/alpha"], reason: "unavailable", strike: 0, until: T0 + 2 + 6 * 60 * MIN })
    expect(ds.at(-1)).toMatchObject({ slots: [{ cooling: { reason: "unavailable", until: T0 + 2 + 6 * 60 * MIN } }, { cooling: null }] })
  })

  it("US-4 a limit on a session whose claim is no longer live is not attributed (no model, nothing cooled)", () => {
    const ds = run(trace(...bound, { at: T0 + 11 * MIN, type: "limit", text: "limit reached", session: "s1" }))
    expect(ds.at(-1)).toEqual({ type: "ignore", at: T0 + 11 * MIN, reason: "not_a_limit" })
  })
})

describe("no first token: a sweep's stalled claims (issue 35, TRACE.md §6)", () => {
  const SEC = 1_000
  it("US-8 a stalled claim is aborted and released as hung with no cooldown; the second in a row on its model cools it for hang", () => {
    expect(
      lines(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), sweep(T0 + 90 * SEC, { stalled: ["c1"] }), spawn(T0 + 91 * SEC, "c2"), bind(T0 + 91 * SEC, "c2", "s2"), sweep(T0 + 181 * SEC, { stalled: ["c2"] })))
    ).toEqual([
      `{"at":${T0},"type":"route","claim":"c1","base":"explore","slot":1,"model":"zen/alpha","agent":"explore-1","pass":"first"}`,
      `{"at":${T0 + 90 * SEC},"type":"abort","claim":"c1","session":"s1","ok":true}`,
      `{"at":${T0 + 90 * SEC},"type":"release","claim":"c1","cooled":false,"reason":"hung"}`,
      `{"at":${T0 + 91 * SEC},"type":"route","claim":"c2","base":"explore","slot":1,"model":"zen/alpha","agent":"explore-1","pass":"first"}`,
      `{"at":${T0 + 181 * SEC},"type":"abort","claim":"c2","session":"s2","ok":true}`,
      `{"at":${T0 + 181 * SEC},"type":"cool","models":["zen/alpha"],"scope":"model","reason":"hang","until":${T0 + 181 * SEC + 10 * MIN},"strike":0}`,
      `{"at":${T0 + 181 * SEC},"type":"release","claim":"c2","cooled":true,"reason":"hung"}`
    ])
  })

  it("US-8 misses on another model, or a success on the same model in between, keep a miss from being the second in a row", () => {
    const ds = run(
      trace(
        P,
        spawn(T0, "a"),
        spawn(T0, "b"),
        bind(T0, "a", "sa"),
        bind(T0, "b", "sb"),
        // a is on zen/alpha, b on go/gamma: one miss each
        sweep(T0 + 90 * SEC, { stalled: ["a", "b"] }),
        spawn(T0 + 91 * SEC, "c"),
        bind(T0 + 91 * SEC, "c", "sc"),
        { at: T0 + 100 * SEC, type: "release", claim: "c", ok: true },
        spawn(T0 + 101 * SEC, "d"),
        bind(T0 + 101 * SEC, "d", "sd"),
        sweep(T0 + 191 * SEC, { stalled: ["d"] })
      )
    )
    expect(ds.filter((d) => d.type === "cool")).toEqual([])
    expect(ds.filter((d) => d.type === "release").map((d) => d.type === "release" && `${d.claim}:${d.reason}`)).toEqual(["a:hung", "b:hung", "c:done", "d:hung"])
  })

  it("US-8 a stalled entry for an unbound, unknown or already aborting claim does nothing of its own; a stalled claim also spinning is aborted once, as spinning", () => {
    const ds = run(trace(P, spawn(T0, "c1"), sweep(T0 + 90 * SEC, { stalled: ["c1", "nope"] })))
    expect(ds.slice(1)).toEqual([])
    const both = run(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), sweep(T0 + 90 * SEC, { spinning: ["c1"], stalled: ["c1"] })))
    expect(both.slice(1).map((d) => d.type)).toEqual(["abort", "cool", "release"])
    // a signal's abort in flight keeps its origin: the stalled entry adds nothing, the outcome releases as signal
    const signalled = run(
      trace(
        P,
        spawn(T0, "c1"),
        bind(T0, "c1", "s1"),
        { at: T0 + 1, type: "limit", session: "s1", text: "Rate limit exceeded", abort: "pending" },
        sweep(T0 + 90 * SEC, { stalled: ["c1"], abort: "pending" }),
        { at: T0 + 91 * SEC, type: "aborted", claim: "c1", ok: true }
      )
    )
    expect(signalled.filter((d) => d.type === "abort" || d.type === "release").map((d) => (d.type === "release" ? d.reason : d.type))).toEqual(["abort", "signal"])
  })

  it("US-10 a failed stalled abort is retried by later sweeps with its first-token origin: a first miss still cools nothing once it succeeds", () => {
    const ds = run(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), sweep(T0 + 90 * SEC, { stalled: ["c1"], abort: "fail" }), sweep(T0 + 120 * SEC)))
    expect(ds.slice(1).map((d) => (d.type === "abort" ? `abort:${d.ok}` : d.type === "release" ? `release:${d.reason}` : d.type))).toEqual(["abort:false", "abort:true", "release:hung"])
  })
})

describe("the first-token verdict (core/pool/reaper.ts)", () => {
  const bound: Claim = {
    key: "c1",
    base: "explore",
    slot: 1,
    model: "zen/alpha",
    acquiredAt: T0,
    heartbeatAt: T0,
    ownerSession: "par",
    targetSession: "s1",
    abortAttempts: 0,
    abortPending: false,
    abortOrigin: null,
    abortInFlight: false,
    endedInFlight: false
  }
  it("US-8 a bound claim misses its first token from firstTokenMs after its spawn, unless it spoke, is held by a person, is unbound or is already being aborted", () => {
    expect(missedFirstToken(bound, false, false, T0 + 89_999, 90_000)).toBe(false)
    expect(missedFirstToken(bound, false, false, T0 + 90_000, 90_000)).toBe(true)
    expect(missedFirstToken(bound, true, false, T0 + 10 * MIN, 90_000)).toBe(false)
    expect(missedFirstToken(bound, false, true, T0 + 10 * MIN, 90_000)).toBe(false)
    expect(missedFirstToken(updateClaim(bound, { targetSession: null }), false, false, T0 + 10 * MIN, 90_000)).toBe(false)
    expect(missedFirstToken(updateClaim(bound, { abortPending: true }), false, false, T0 + 10 * MIN, 90_000)).toBe(false)
    expect(missedFirstToken(updateClaim(bound, { abortInFlight: true }), false, false, T0 + 10 * MIN, 90_000)).toBe(false)
  })

  it("US-8 only the second miss in a row cools", () => {
    expect([0, 1, 2].map(firstTokenCools)).toEqual([false, true, true])
  })
})

