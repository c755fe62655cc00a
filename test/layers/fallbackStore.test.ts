/** The fallback records of the backends (issue 12, US-50): `fallback.<enc>.json` per root session, shown until its original recovers. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { decodeFallback, encodeFallback, fallbackFileName, type FallbackRecord } from "../../src/core/quota/fallbackRecord.js"
import { renderStatus, statusView } from "../../src/core/status.js"
import { fallbackFilesOn, fallbacksInMemory } from "../../src/layers/state/fallbackFiles.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const stateDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-fallback-"))
  chmodSync(dir, 0o700)
  return dir
}
const onDir = (dir: string | undefined, trusted = true) => fallbackFilesOn(dir, trusted)

const REC: FallbackRecord = { session: "ses_a", original: "zen/a", active: "go/b", until: NOW + 300_000, at: NOW }

describe("fallback records in files", () => {
  it.live("US-50 a switch round-trips through its 0600 file and is shown until the original recovers; then the file goes", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      const s = onDir(dir)
      yield* s.write([REC])
      const path = join(dir, fallbackFileName("ses_a"))
      expect(statSync(path).mode & 0o777).toBe(0o600)
      expect(yield* s.readAll(NOW + 1000)).toEqual([REC])
      expect(yield* s.readAll(NOW + 300_000)).toEqual([])
      expect(existsSync(path)).toBe(false)
    })
  })

  it.live("US-50 remove forgets the session; unreadable files and files under another session's name are skipped", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      const s = onDir(dir)
      yield* s.write([REC, { ...REC, session: "ses_b" }])
      writeFileSync(join(dir, "fallback.garbage.json"), "{not json")
      writeFileSync(join(dir, fallbackFileName("ses_c")), encodeFallback({ ...REC, session: "ses_d" }))
      yield* s.remove("ses_a")
      expect((yield* s.readAll(NOW)).map((r) => r.session)).toEqual(["ses_b"])
      expect(readdirSync(dir)).not.toContain(fallbackFileName("ses_a"))
    })
  })

  it.effect("US-50 without a state directory (and in the memory backend) the records live in the process, over ones hidden", () =>
    Effect.gen(function* () {
      for (const s of [onDir(undefined), fallbacksInMemory()]) {
        yield* s.write([REC, { ...REC, session: "ses_old", until: NOW - 1 }])
        expect(yield* s.readAll(NOW)).toEqual([REC])
        yield* s.remove("ses_a")
        expect(yield* s.readAll(NOW)).toEqual([])
      }
    })
  )

  it("US-50 decoding is tolerant: a bad file is undefined, never a throw", () => {
    expect(decodeFallback(encodeFallback(REC))).toEqual(REC)
    for (const bad of ["", "null", "[]", '{"session":1}', '{"session":"s","original":"a","active":"b","until":"x","at":1}']) expect(decodeFallback(bad)).toBeUndefined()
  })

  it("US-50 ocpool status shows each root session on a fallback, with the original's reset, in text and JSON", () => {
    const view = statusView({ origin: "t", slots: [], processes: [], cooldowns: new Map(), now: NOW, warnings: [], fallbacks: [REC, { ...REC, session: "ses_old", until: NOW - 1 }] })
    expect(view.fallbacks).toEqual([{ session: "ses_a", original: "zen/a", active: "go/b", until: NOW + 300_000 }])
    expect(renderStatus(view, { now: NOW, processes: [] }).split("\n")).toContain("  ses_a  zen/a → go/b  until 12:05:00Z (5m00s)")
    expect(statusView({ origin: "t", slots: [], processes: [], cooldowns: new Map(), now: NOW, warnings: [] }).fallbacks).toBeUndefined()
  })
})
