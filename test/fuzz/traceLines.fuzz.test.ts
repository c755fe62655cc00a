/**
 * Fuzz family: trace lines. Random and hostile lines (structured lines with hostile values, times
 * beyond the date range, deep nesting, runaway strings, raw garbage) go through the trace decoder and
 * the replay machine in-process, each decision formatted and explained as `ocpool replay --explain`
 * does: the only outcomes are decisions or an invalid line with a one-line reason; nothing throws.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { explainDecision, formatDecision } from "../../src/core/trace/format.js"
import { feed, startReplay } from "../../src/core/trace/replay.js"
import { fuzzParams, fuzzTimeout, hostileNumber, hostileString } from "./common.js"

const T = 1_796_115_600_000
const REASONS = ["rate_limit", "quota", "outage", "unavailable", "auth", "hang", "nope"] as const
const MODELS = ["zen/a", "go/b", "zen/\u001b[31mc", "x"] as const

/** Mostly plausible values, sometimes hostile ones. */
const time = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 3_600_000 }).map((d) => T + d) }, { weight: 1, arbitrary: hostileNumber })
const value = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 3 }))
const name = fc.oneof({ weight: 3, arbitrary: fc.constantFrom("c1", "c2", "c3", "s1", "s2") }, { weight: 1, arbitrary: hostileString })
const peerCooling = fc.array(fc.record({ model: fc.constantFrom(...MODELS), until: time, reason: fc.constantFrom(...REASONS), strikes: fc.oneof(fc.nat(6), hostileNumber) }), { maxLength: 3 })

/** Permit lines: mostly plausible fields (so some reach the machine), now and then a hostile one. */
const mostly = <A>(plausible: fc.Arbitrary<A>): fc.Arbitrary<unknown> => fc.oneof({ weight: 40, arbitrary: plausible }, { weight: 1, arbitrary: value })
const permitTime = fc.integer({ min: 0, max: 3_600_000 }).map((d) => T + d)
const permitHolder = fc.record({ host: fc.constantFrom("box", "other"), pid: mostly(fc.integer({ min: 1, max: 5 })), startToken: mostly(fc.constantFrom(null, "1", "2")), via: mostly(fc.constantFrom("plugin", "run", "mcp")) }, { requiredKeys: ["host", "pid", "via"] })
const permitEntry = fc.record(
  { id: fc.constantFrom("p1", "p2", "p3"), token: fc.constantFrom("t1", "t2"), budget: fc.constantFrom("heavy", "gpu", "constructor"), weight: mostly(fc.integer({ min: 0, max: 3 })), reason: fc.oneof(fc.constant("npm test"), hostileString), holder: permitHolder, seq: mostly(fc.nat(9)), requestedAt: mostly(permitTime), grantedAt: mostly(permitTime), seenAt: mostly(permitTime), headSince: mostly(permitTime), pausedAt: mostly(permitTime), ahead: mostly(fc.nat(3)), gone: fc.boolean() },
  { requiredKeys: ["id", "token", "budget", "weight", "reason", "holder", "seq", "requestedAt"] }
)
const permitOp = mostly(
  fc.oneof(
    fc.record({ op: fc.constant("request"), entry: permitEntry }),
    fc.record({ op: fc.constantFrom("poll", "release"), id: fc.constantFrom("p1", "p2", "p9"), token: fc.constantFrom("t1", "t2") }),
    fc.record({ op: fc.constant("cancel"), id: fc.constantFrom("p1", "p2"), token: fc.constantFrom("t1", "t2"), cause: fc.constantFrom("aborted", "timeout", "wait", "error", "dispose", "forced") }),
    fc.record({ op: fc.constant("rebind"), id: fc.constantFrom("p1", "p2"), token: fc.constantFrom("t1", "t2"), group: fc.record({ pgid: mostly(fc.nat(9)), startToken: mostly(fc.constantFrom(null, "5")) }) }),
    fc.record({ op: fc.constant("free"), id: fc.constantFrom("p1", "p2", "p9"), force: mostly(fc.boolean()) }),
    fc.record({ op: fc.constantFrom("settle", "steal") })
  )
)
const permitLine = fc.record({
  type: fc.constant("permit"),
  at: time,
  op: permitOp,
  capacities: fc.dictionary(fc.constantFrom("heavy", "gpu", "__proto__"), mostly(fc.integer({ min: 1, max: 3 }))),
  entries: fc.uniqueArray(permitEntry, { maxLength: 3, selector: (e) => e.id })
})

const structured: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ type: fc.constant("pool"), at: time, slots: fc.array(fc.oneof(fc.record({ model: fc.constantFrom(...MODELS), weight: fc.oneof(fc.nat(5), value) }), value), { maxLength: 4 }), hangMinAgeMs: fc.oneof(fc.constant(undefined), hostileNumber), hangSilenceMs: fc.oneof(fc.constant(undefined), fc.nat(10_000_000)) }),
  fc.record({ type: fc.constant("spawn"), at: time, claim: name, base: fc.constantFrom("explore", "implement", "context", "explore-2", "build"), session: name, peers: fc.dictionary(fc.constantFrom(...MODELS), hostileNumber), peerCooling }),
  fc.record({ type: fc.constant("bind"), at: time, claim: name, session: name, activity: fc.boolean() }),
  fc.record({ type: fc.constant("activity"), at: time, session: name }),
  fc.record({ type: fc.constant("release"), at: time, claim: name, ok: fc.boolean(), peerCooling }),
  fc.record({ type: fc.constant("aborted"), at: time, claim: name, ok: fc.boolean() }),
  fc.record({ type: fc.constant("limit"), at: time, text: fc.oneof(fc.constantFrom("rate limit", "quota exceeded", "limit reached", "overloaded"), hostileString), status: fc.oneof(fc.constantFrom(429, 500, 401, 404), hostileNumber), headers: fc.dictionary(fc.constantFrom("retry-after", "retry-after-ms", "x-ratelimit-reset"), fc.oneof(fc.constantFrom("5", "1e16", "-1", "Infinity"), hostileString)), model: fc.constantFrom(...MODELS), session: name, abort: fc.constantFrom("ok", "fail", "pending"), peerCooling }),
  fc.record({ type: fc.constant("retry"), at: time, session: name, message: fc.oneof(fc.constantFrom("rate limit", "busy"), hostileString), next: time, provider: fc.constantFrom("zen", "go") }),
  fc.record({ type: fc.constant("sweep"), at: time, blocked: fc.array(name, { maxLength: 2 }), spinning: fc.array(name, { maxLength: 2 }), aborts: fc.dictionary(name, fc.constantFrom("ok", "fail", "pending", "maybe")) }),
  fc.record({ type: fc.constant("status"), at: time, peerCooling }),
  permitLine,
  permitLine
)

/** One line: a structured one (sometimes with a field replaced by anything), a deeply nested one, or raw text. */
const line: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: structured.map((o) => JSON.stringify(o)) },
  { weight: 2, arbitrary: fc.tuple(structured, fc.constantFrom("at", "type", "claim", "session", "slots", "peerCooling", "next", "until", "op", "entries", "capacities"), value).map(([o, k, v]) => JSON.stringify({ ...o, [k]: v }) ?? "") },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 6_000 }).map((d) => `{"at":${T},"type":"pool","slots":${"[".repeat(d)}${"]".repeat(d)}}`) },
  { weight: 1, arbitrary: hostileString }
)

describe("fuzz: trace lines through the decoder and the replay machine", () => {
  it(
    "US-45 any sequence of lines gives decisions or one invalid line with a one-line reason; nothing throws",
    () => {
      fc.assert(
        fc.property(fc.array(line, { minLength: 1, maxLength: 12 }), (lines) => {
          let cursor = startReplay()
          for (const l of lines) {
            const r = feed(cursor, l)
            if (r._tag === "Invalid") {
              expect(r.message).not.toMatch(/[\n\r]/)
              expect(r.message).not.toMatch(/Maximum call stack|RangeError|Invalid time value/)
              // bounded by the line: each echoed value is cut to 80 characters
              if (r.message.length > 2 * l.length + 400) throw new Error(`runaway message: ${r.message.slice(0, 600)}`)
              return
            }
            cursor = r.cursor
            for (const d of r.decisions) {
              expect(typeof formatDecision(d)).toBe("string")
              expect(typeof explainDecision(d)).toBe("string")
            }
          }
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(5)
  )
})
