#!/usr/bin/env node
/**
 * Regenerates presets/prices.json from the model catalog (models.dev) that the pinned opencode
 * binary bundles. Usage: node scripts/prices-snapshot.mjs <path-to-opencode-binary> [out]
 *
 * The binary carries the catalog as one JavaScript object literal (providers -> models -> cost).
 * The script finds the literal, cuts it out by brace matching, evaluates it in an empty VM context
 * (no globals, no require) and keeps, per `provider/model`, the cost block: USD per 1M tokens.
 * Developer tool only: nothing at run time reads the binary.
 */
import { readFileSync, writeFileSync } from "node:fs"
import vm from "node:vm"

const [binary, out = "presets/prices.json", version = "1.18.33"] = process.argv.slice(2)
if (!binary) {
  console.error("usage: node scripts/prices-snapshot.mjs <opencode-binary> [out] [version]")
  process.exit(2)
}
const text = readFileSync(binary, "latin1")
const first = text.search(/[A-Za-z0-9"-]+:\{id:"[a-z0-9-]+",env:\[/)
if (first < 0) throw new Error("no catalog literal found")
const start = text.lastIndexOf("({", first) + 1
let depth = 0
let end = -1
let quote = null
for (let i = start; i < text.length; i++) {
  const c = text[i]
  if (quote) {
    if (c === "\\") i++
    else if (c === quote) quote = null
    continue
  }
  if (c === '"' || c === "'" || c === "`") quote = c
  else if (c === "{") depth++
  else if (c === "}") {
    depth--
    if (depth === 0) {
      end = i + 1
      break
    }
  }
}
const catalog = vm.runInNewContext(`(${text.slice(start, end)})`, Object.create(null), { timeout: 10_000 })
const models = {}
const num = (v) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined)
for (const provider of Object.keys(catalog).sort()) {
  const block = catalog[provider]
  for (const id of Object.keys(block.models ?? {}).sort()) {
    const cost = block.models[id].cost
    if (!cost || num(cost.input) === undefined || num(cost.output) === undefined) continue
    const entry = { input: cost.input, output: cost.output }
    if (num(cost.cache_read) !== undefined) entry.cache_read = cost.cache_read
    if (num(cost.cache_write) !== undefined) entry.cache_write = cost.cache_write
    models[`${provider}/${id}`] = entry
  }
}
const body = {
  $comment:
    "Price snapshot: USD per 1M tokens per provider/model, from the models.dev catalog bundled in opencode " +
    version +
    ". Regenerate with scripts/prices-snapshot.mjs. A slot priced above zero gets one warning at boot; ocpool cost uses it when no catalog is at hand.",
  source: `models.dev catalog in opencode ${version}`,
  unit: "USD per 1M tokens",
  models
}
const lines = Object.entries(models).map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
const json =
  "{\n" +
  `  "$comment": ${JSON.stringify(body.$comment)},\n` +
  `  "source": ${JSON.stringify(body.source)},\n` +
  `  "unit": ${JSON.stringify(body.unit)},\n` +
  `  "models": {\n${lines.join(",\n")}\n  }\n}\n`
JSON.parse(json)
writeFileSync(out, json)
console.log(`${Object.keys(models).length} priced models -> ${out}`)
