/**
 * `ocpool init` on big configs (`npm run bench:init [-- --rounds R]`, not part of CI; issue 18 item 2).
 * The edit is linear in the file's size: a minified config costs what the same data pretty-printed
 * costs, and four times the bytes cost about four times the time (a quadratic edit would cost 16).
 * Reported as ratios against references measured in the same run: the core edit against `JSON.parse`
 * of the same text, the CLI on a 1 MiB one-line config against the same command on a one-line config
 * of a few bytes; and the target: `ocpool init --global` on a 1 MiB one-line config in under 2 s.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { addPluginEntry } from "../src/core/opencodeConfig.js"
import { arg, CLI, median } from "./common.js"

const ROUNDS = arg("rounds", 5)
const TARGET_MS = 2_000
const ENTRY = "opencode-pool"
const ours = (n: string) => n === ENTRY

/** An object of many short keys whose one-line form is about `bytes` long. */
const data = (bytes: number): Record<string, string> => {
  const o: Record<string, string> = {}
  let size = 2
  for (let i = 0; size < bytes - 40; i++) {
    o[`key${i}`] = `value${i}`
    size += `"key${i}":"value${i}",`.length
  }
  return o
}

const time = (f: () => unknown): number => {
  const t0 = process.hrtime.bigint()
  f()
  return Number(process.hrtime.bigint() - t0) / 1e6
}

const medianOf = (f: () => unknown): number => median(Array.from({ length: ROUNDS }, () => time(f)))

const MiB = 1 << 20
const small = JSON.stringify(data(MiB / 4))
const mini = JSON.stringify(data(MiB - 64))
const pretty = JSON.stringify(JSON.parse(mini), null, 2)
const array = JSON.stringify({ plugin: Array.from({ length: 60_000 }, (_, i) => `plugin-${i}`) })

console.log(`init bench: ${ROUNDS} rounds, node ${process.version}`)
// warm the edit and the reference
for (const t of [small, mini, pretty, array]) {
  addPluginEntry(t, ENTRY, ours)
  JSON.parse(t)
}
const rows: Array<[string, number, number]> = [
  ["one-line 256 KiB", small.length, medianOf(() => addPluginEntry(small, ENTRY, ours))],
  ["one-line 1 MiB", mini.length, medianOf(() => addPluginEntry(mini, ENTRY, ours))],
  ["pretty, same data", pretty.length, medianOf(() => addPluginEntry(pretty, ENTRY, ours))],
  ["one-line plugin list", array.length, medianOf(() => addPluginEntry(array, ENTRY, ours))]
]
const parseMs = medianOf(() => JSON.parse(mini))
for (const [name, bytes, ms] of rows) console.log(`core edit, ${name} (${bytes.toLocaleString("en-US")} bytes): ${ms.toFixed(1)} ms`)
console.log(`reference: JSON.parse of the 1 MiB one-line text: ${parseMs.toFixed(1)} ms`)
console.log(`core edit / JSON.parse, 1 MiB one-line: ${(rows[1]![2] / parseMs).toFixed(1)}x`)
console.log(`1 MiB / 256 KiB (linear: ~4x, quadratic: ~16x): ${(rows[1]![2] / rows[0]![2]).toFixed(1)}x`)
console.log(`one-line / pretty-printed, same data: ${(rows[1]![2] / rows[2]![2]).toFixed(2)}x`)

/** `ocpool init --global` in a fresh HOME whose config is `text`: the whole process, in ms. */
const cliRun = (text: string): number => {
  const home = mkdtempSync(join(tmpdir(), "ocpool-bench-init-"))
  try {
    mkdirSync(join(home, ".config", "opencode"), { recursive: true })
    mkdirSync(join(home, ".config", "opencode-pool"), { recursive: true })
    writeFileSync(join(home, ".config", "opencode-pool", "pool.txt"), "a/b 1\n")
    writeFileSync(join(home, ".config", "opencode", "opencode.json"), text)
    const t0 = process.hrtime.bigint()
    const r = spawnSync(process.execPath, [CLI, "init", "--global"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, encoding: "utf8" })
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    if (r.status !== 0) throw new Error(`ocpool init --global exited ${r.status}: ${r.stderr}`)
    return ms
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}
cliRun('{"a":1}')
const tiny = median(Array.from({ length: ROUNDS }, () => cliRun('{"a":1}')))
const big = median(Array.from({ length: ROUNDS }, () => cliRun(mini)))
console.log(`ocpool init --global, a one-line config of 7 bytes (reference): ${tiny.toFixed(0)} ms`)
console.log(`ocpool init --global, a 1 MiB one-line config: ${big.toFixed(0)} ms (${(big / tiny).toFixed(2)}x the reference; target under ${TARGET_MS} ms: ${big < TARGET_MS ? "met" : "MISSED"})`)
if (big >= TARGET_MS) process.exitCode = 1
