/**
 * Shared settings of the fuzz suite (test/fuzz/*.fuzz.test.ts).
 * `npm test` runs every family with a few hundred cases; `npm run test:fuzz` (CI) runs FUZZ_RUNS cases
 * per family (10,000 there). The seed is fixed so a failure replays; FUZZ_SEED overrides it.
 */
import fc from "fast-check"

export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 300)
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261201)

/** fast-check parameters for one family: seeded, FUZZ_RUNS cases, no shrinking budget blow-up. */
export const fuzzParams = (runs: number = FUZZ_RUNS): fc.Parameters<unknown> => ({
  numRuns: runs,
  seed: FUZZ_SEED,
  endOnFailure: true
})

/**
 * A yield to the event loop every `every`-th call. A property whose cases await only promises never
 * returns to the event loop, and vitest's worker must answer its runner within 60 s (a fixed RPC
 * timeout): a family that runs longer without a macrotask fails the whole run though every case passed.
 */
export const breather = (every = 100): (() => Promise<void>) => {
  let calls = 0
  return async () => {
    if (++calls % every === 0) await new Promise<void>((r) => setImmediate(r))
  }
}

/** A vitest timeout that grows with the case count (each case is bounded on its own). */
export const fuzzTimeout = (msPerCase: number, runs: number = FUZZ_RUNS): number => Math.max(30_000, Math.ceil(runs * msPerCase))

/** Strings a hostile user reaches for: control and escape sequences, BOM, huge numbers, deep nesting, odd unicode. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.fullUnicodeString(),
  fc.constantFrom(
    "",
    "\u001b[31mred\u001b[0m",
    "\u001b]0;title\u0007",
    "\ufeff",
    "\u0000",
    "\r\n",
    "1e16",
    "8640000000000001",
    "-1",
    "NaN",
    "Infinity",
    "__proto__",
    "constructor",
    "../../etc/passwd",
    "/proc/nope",
    "[".repeat(5000),
    "{\"a\":".repeat(5000)
  )
)

/** Numbers outside every valid range: beyond the Date range, negative, non-integers, NaN-like. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -1, 1e16, 8.64e15 + 1, -8.64e15 - 1, Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, 1e308, -0)
)
