/**
 * Fuzz family: state files. Random and hostile claim and cooldown record contents (times beyond
 * the date range, negative and fractional counts, escape sequences in keys and hosts, deep nesting,
 * garbage) go through their decoders and, for claims and cooldowns, the status view and its text:
 * a decoded file holds only values in range, the text is printable, and nothing throws.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { decodeClaimFile } from "../../src/core/pool/claimFile.js"
import type { Cooldown } from "../../src/core/pool/cooldown.js"
import { decodeCooldown } from "../../src/core/pool/cooldownFile.js"
import { isEpochMs } from "../../src/core/readLimits.js"
import { renderStatus, statusView, type ProcessSnapshot } from "../../src/core/status.js"
import { fuzzParams, fuzzTimeout, hostileNumber, hostileString } from "./common.js"

const NOW = 1_796_115_600_000
const time = fc.oneof({ weight: 3, arbitrary: fc.integer({ min: -3_600_000, max: 3_600_000 }).map((d) => NOW + d) }, { weight: 2, arbitrary: hostileNumber })
const anything = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 3 }))
const maybe = <A>(a: fc.Arbitrary<A>) => fc.oneof({ weight: 4, arbitrary: a }, { weight: 1, arbitrary: anything })
const model = fc.constantFrom("zen/a", "go/b", "zen/\u001b[31mc\u009b2J")

/** A number as JSON text, including what JSON.stringify cannot write (1e999 reads as Infinity). */
const numText = fc.oneof(hostileNumber.map((n) => (Number.isFinite(n) ? JSON.stringify(n) : "1e999")), fc.constantFrom("1e16", "-1e16", "8640000000000001", "1e999", "-1e999"))

const claimEntry = fc.record({ base: maybe(fc.constantFrom("explore", "implement", "context")), slot: maybe(fc.nat(8)), model: maybe(model), acquiredAt: maybe(time), heartbeatAt: maybe(time), ownerSession: maybe(hostileString), targetSession: maybe(hostileString), abortAttempts: maybe(fc.nat(5)), abortPending: maybe(fc.boolean()) })
const claimFile = fc.oneof(
  { weight: 6, arbitrary: fc.record({ pid: maybe(fc.integer({ min: 1, max: 4_000_000 })), host: maybe(hostileString), startTime: maybe(fc.string()), writtenAt: maybe(time), reaped: maybe(fc.nat(9)), claims: fc.dictionary(hostileString, fc.oneof(claimEntry, anything), { maxKeys: 5 }) }).map((o) => JSON.stringify(o)) },
  { weight: 1, arbitrary: fc.tuple(numText, numText).map(([a, b]) => `{"pid":1,"claims":{"k":{"base":"explore","model":"zen/a","acquiredAt":${a},"heartbeatAt":${b},"slot":${a}}}}`) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 6_000 }).map((d) => `{"pid":1,"claims":{"k":${"[".repeat(d)}${"]".repeat(d)}}}`) },
  { weight: 1, arbitrary: hostileString }
)
const cooldownFile = fc.oneof(
  { weight: 6, arbitrary: fc.record({ model: maybe(model), reason: maybe(fc.constantFrom("rate_limit", "quota", "outage", "unavailable", "auth", "hang")), strikes: maybe(fc.nat(6)), scope: maybe(fc.constantFrom("model", "provider")), since: maybe(time), until: maybe(time), source: maybe(fc.string()) }).map((o) => JSON.stringify(o)) },
  { weight: 1, arbitrary: fc.tuple(numText, numText).map(([u, s]) => `{"model":"zen/a","until":${u},"since":${s},"strikes":${s}}`) },
  { weight: 1, arbitrary: hostileString }
)
const isCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 0
// eslint-disable-next-line no-control-regex
const isPrintable = (s: string): boolean => !/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(s)

describe("fuzz: claim and cooldown records through their decoders and the status view", () => {
  it(
    "US-9 any state file content decodes to values in range or to nothing; the status text stays printable; nothing throws",
    () => {
      fc.assert(
        fc.property(fc.array(claimFile, { maxLength: 3 }), fc.array(cooldownFile, { maxLength: 3 }), (claims, cooldowns) => {
          const processes: Array<ProcessSnapshot> = []
          for (const text of claims) {
            const f = decodeClaimFile(text)
            if (f === undefined) continue
            expect(Number.isSafeInteger(f.pid) && f.pid >= 1).toBe(true)
            expect(isEpochMs(f.writtenAt) && isCount(f.reaped)).toBe(true)
            for (const c of f.claims) expect(isEpochMs(c.acquiredAt) && isEpochMs(c.heartbeatAt) && isCount(c.slot) && isCount(c.abortAttempts)).toBe(true)
            processes.push({ pid: f.pid, host: f.host, reaped: f.reaped, claims: f.claims })
          }
          const table = new Map<string, Cooldown>()
          for (const text of cooldowns) {
            const c = decodeCooldown(text)
            if (c === undefined) continue
            expect(isEpochMs(c.until) && isEpochMs(c.since) && isCount(c.strikes)).toBe(true)
            table.set(c.model, c)
          }
          const slots = [
            { index: 1, model: "zen/a", provider: "zen", weight: 2 },
            { index: 2, model: "zen/\u001b[31mc\u009b2J", provider: "zen", weight: 1 }
          ]
          const view = statusView({ origin: "pool.txt", slots, processes, cooldowns: table, now: NOW, warnings: [] })
          expect(typeof JSON.stringify(view)).toBe("string")
          const text = renderStatus(view, { now: NOW, processes })
          expect(isPrintable(text)).toBe(true)
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(5)
  )
})
