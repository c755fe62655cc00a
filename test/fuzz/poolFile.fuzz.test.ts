/**
 * Fuzz family: pool files. Random and hostile `pool.txt` and `pool.json` contents (garbage, escape
 * sequences, a BOM, deep nesting, huge and out-of-range weights, odd unicode) are written to a temp
 * file, read through safeRead and resolved by the source chain: the only outcomes are a valid pool
 * or a one-line reason, every warning printable; nothing throws.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { MAX_SLOTS_LIMIT, WEIGHT_MAX } from "../../src/core/constants.js"
import { POOL_FILE_MAX_BYTES } from "../../src/core/readLimits.js"
import { parsePoolText } from "../../src/core/pool/pool.js"
import { resolvePool } from "../../src/core/source.js"
import { readTextFile } from "../../src/layers/fs/safeRead.js"
import { fuzzParams, fuzzTimeout, hostileNumber, hostileString } from "./common.js"

const model = fc.oneof(fc.constantFrom("zen/a", "go/b", "openrouter/x/y:free", "zen/\u001b[31mred", "/x", "x/", ""), hostileString)
const weight = fc.oneof(fc.nat(200), hostileNumber, hostileString, fc.constant(undefined))
const jsonValue = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 4 }))

/** A flat file: lines of `model weight # comment`, garbage lines, CRLF or LF. */
const flat = fc.tuple(fc.array(fc.oneof(fc.tuple(model, weight).map(([m, w]) => (w === undefined ? m : `${m} ${String(w)}`)), hostileString), { maxLength: 12 }), fc.constantFrom("\n", "\r\n")).map(([lines, nl]) => lines.join(nl))

/** A JSON file: `slots` with hostile entries, or a hostile value, or nested deep. */
const json = fc.oneof(
  fc.array(fc.oneof(fc.record({ model, weight: fc.oneof(weight, jsonValue), tier: fc.oneof(fc.constantFrom("primary", "backup"), jsonValue) }), jsonValue), { maxLength: 12 }).map((slots) => JSON.stringify({ slots })),
  jsonValue.map((v) => `{"slots":${JSON.stringify(v) ?? "null"}}`),
  fc.integer({ min: 1, max: 6_000 }).map((d) => `{"slots":[${'{"model":'.repeat(d)}1${"}".repeat(d)}]}`),
  fc.integer({ min: 1, max: 6_000 }).map((d) => `{"slots":${"[".repeat(d)}${"]".repeat(d)}}`),
  hostileString.map((s) => `{${s}`)
)

const content = fc.tuple(fc.boolean(), fc.oneof(flat, json)).map(([bom, text]) => (bom ? `\ufeff${text}` : text))

const isOneLine = (s: string): boolean => !/[\n\r]/.test(s)
// eslint-disable-next-line no-control-regex
const isPrintable = (s: string): boolean => !/[\u0000-\u001f\u007f-\u009f]/.test(s)

describe("fuzz: pool files through safeRead and the source chain", () => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-fuzz-pool-"))

  it(
    "US-7 any pool file content gives a valid pool or a one-line reason; warnings are printable; nothing throws",
    () => {
      let n = 0
      fc.assert(
        fc.property(content, fc.integer({ min: 1, max: MAX_SLOTS_LIMIT }), (text, maxSlots) => {
          const path = join(dir, `pool-${n++ % 4}.${text.trimStart().startsWith("{") ? "json" : "txt"}`)
          writeFileSync(path, text)
          const read = readTextFile(path, POOL_FILE_MAX_BYTES)
          expect(read._tag).toBe("Text")
          if (read._tag !== "Text") return
          const direct = parsePoolText(read.text, maxSlots)
          if (direct._tag === "Unusable") expect(isOneLine(direct.reason)).toBe(true)
          const pool = resolvePool([{ kind: "file", origin: path, text: read.text }], maxSlots)
          expect(pool.slots.length).toBeGreaterThan(0)
          expect(pool.slots.length).toBeLessThanOrEqual(maxSlots)
          for (const s of pool.slots) {
            expect(s.model.indexOf("/")).toBeGreaterThan(0)
            expect(s.weight > 0 && s.weight <= WEIGHT_MAX).toBe(true)
          }
          for (const w of pool.warnings) {
            expect(isOneLine(w)).toBe(true)
            expect(isPrintable(w)).toBe(true)
            expect(w.length).toBeLessThan(2_000)
          }
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(5)
  )
})
