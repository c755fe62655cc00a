/**
 * Classifying a provider's error (`npm run bench:classify [-- --rounds R]`, not part of CI; issue 19).
 * Every payload of the corpus (test/fixtures/provider-errors/), as opencode hands it to the plugin, goes
 * through the whole limit decision (view, rules, scope, stated reset, cooling plan). Reported as a ratio
 * against a reference measured in the same run: `JSON.parse` of the same error texts (the least any
 * reader of them pays). The target: every payload in under 1 ms, the worst one included.
 */
import { join } from "node:path"
import type { Slot } from "../src/core/pool/pool.js"
import { decideLimit, providerOf } from "../src/core/pool/cooldown.js"
import { loadCorpus, opencodeErrorText } from "../test/support/providerCorpus.js"
import { arg, median, ROOT } from "./common.js"

const ROUNDS = arg("rounds", 200)
const TARGET_MS = 1

const cases = loadCorpus(join(ROOT, "test/fixtures/provider-errors")).flatMap((f) => f.cases)

const inputs = cases.map((c) => {
  const slots: ReadonlyArray<Slot> = [c.model, `${providerOf(c.model)}/other`, "elsewhere/x"].map((model, i) => ({ model, provider: providerOf(model), weight: 1, index: i + 1 }))
  return { id: c.id, slots, text: opencodeErrorText(c), status: c.status ?? undefined, headers: c.headers, model: c.model, now: Date.parse(c.now) }
})

const time = (f: () => unknown): number => {
  const t0 = process.hrtime.bigint()
  f()
  return Number(process.hrtime.bigint() - t0) / 1e6
}

const decideAll = () => {
  for (const i of inputs) decideLimit(i.slots, new Map(), i, i.now)
}
const parseAll = () => {
  for (const i of inputs) JSON.parse(i.text)
}

console.log(`classify bench: ${inputs.length} payloads, ${ROUNDS} rounds, node ${process.version}`)
for (let i = 0; i < 20; i++) {
  decideAll()
  parseAll()
}
const decided = median(Array.from({ length: ROUNDS }, () => time(decideAll)))
const parsed = median(Array.from({ length: ROUNDS }, () => time(parseAll)))
let worst = { id: "", ms: 0 }
for (const i of inputs) {
  const ms = Math.min(...Array.from({ length: 20 }, () => time(() => decideLimit(i.slots, new Map(), i, i.now))))
  if (ms > worst.ms) worst = { id: i.id, ms }
}
console.log(`all payloads: ${decided.toFixed(3)} ms (${((decided / inputs.length) * 1000).toFixed(1)} µs each); JSON.parse of the same texts: ${parsed.toFixed(3)} ms; ratio ${(decided / parsed).toFixed(2)}x`)
console.log(`slowest payload: ${worst.id} ${(worst.ms * 1000).toFixed(1)} µs (target < ${TARGET_MS} ms): ${worst.ms < TARGET_MS ? "ok" : "OVER"}`)
if (worst.ms >= TARGET_MS) process.exitCode = 1
