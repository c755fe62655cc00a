/**
 * Fuzz family: `ocpool init` over random JSONC (issue 18; US-15). Random configs (minified and pretty,
 * tabs or spaces, comments anywhere, trailing commas, LF, CRLF and both mixed, a BOM, raw bytes that are
 * not UTF-8, duplicate `plugin` keys, `plugin` lists holding this plugin's entry in its spellings) are
 * edited by core/opencodeConfig.ts: an add only inserts bytes and a remove only deletes them (never a
 * byte changed outside the edit), and what the result means is exactly the config with the entry
 * added or taken out; duplicate keys are always refused. A sample runs through the built CLI, killed
 * at a random moment: the file is always the old bytes or the new, never a partial write.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { parse } from "jsonc-parser"
import { addPluginEntry, isOurName, removePluginEntry } from "../../src/core/opencodeConfig.js"
import { cli, ensureBuilt, root } from "../cli/builtCli.js"
import { FUZZ_RUNS, fuzzParams, fuzzTimeout } from "./common.js"

const ENTRY = "opencode-pool"

/** One token of layout between structural tokens: nothing, spaces, a comment, a line break of either kind. */
const trivia = fc.array(fc.constantFrom("", " ", "\t", "\n", "\r\n", "  ", "// note \xe9\n", "/* c */", "/* multi\r\nline */", "// x\r\n"), { maxLength: 2 }).map((a) => a.join(""))

/** A string's bytes: ASCII, UTF-8, and raw bytes that are not UTF-8 (the file is a byte string). */
const bytesString = fc
  .array(fc.oneof(fc.constantFrom("a", "b", "plugin", "opencode-pool", " ", "\\\"", "\\n", "\\u00e9", "\xc3\xa9", "\xe9", "\xff", "\xef\xbb\xbf", "/", "*", "{", "[", ","), fc.string({ maxLength: 4 }).map((s) => s.replace(/["\\\u0000-\u001f\u0100-\uffff]/g, "x"))), { maxLength: 6 })
  .map((a) => `"${a.join("")}"`)

const scalar: fc.Arbitrary<string> = fc.oneof(bytesString, fc.constantFrom("1", "-2.5e3", "true", "false", "null", "0"))

const value: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.tuple(fc.array(fc.tuple(trivia, tie("v")), { maxLength: 3 }), trivia, fc.boolean()).map(([items, end, trailing]) => `[${items.map(([t, v]) => `${t}${v}`).join(",")}${trailing && items.length > 0 ? "," : ""}${end}]`),
    fc.tuple(fc.array(fc.tuple(trivia, bytesString, trivia, tie("v")), { maxLength: 3 }), trivia, fc.boolean()).map(([items, end, trailing]) => `{${items.map(([t, k, t2, v]) => `${t}${k}${t2}:${v}`).join(",")}${trailing && items.length > 0 ? "," : ""}${end}}`)
  )
})).v

/** A `plugin` element: other plugins, this one in its spellings, pairs. */
const pluginElement = fc.oneof(
  fc.constantFrom('"opencode-pool"', '"opencode-pool@0.1.0"', '"other"', '"@someone/opencode-pool"', '"file:///x/opencode-pool/dist/opencode-plugin.js"', '"caf\xc3\xa9"', '"\xe9"'),
  fc.constantFrom('["opencode-pool", {"maxSlots": 2}]', '["other", {}]', "[1]", '{"a": "opencode-pool"}', "[]")
)

interface Config {
  readonly text: string
  readonly duplicate: boolean
  readonly pluginKind: "absent" | "array" | "other"
}

const config: fc.Arbitrary<Config> = fc
  .record({
    bom: fc.boolean(),
    lead: trivia,
    props: fc.array(fc.tuple(trivia, bytesString, trivia, value), { maxLength: 4 }),
    plugin: fc.oneof(
      fc.constant(undefined),
      fc.tuple(fc.array(fc.tuple(trivia, pluginElement), { maxLength: 4 }), trivia, fc.boolean()).map(([items, end, trailing]) => `[${items.map(([t, v]) => `${t}${v}`).join(",")}${trailing && items.length > 0 ? "," : ""}${end}]`),
      fc.constantFrom('"x"', "1", "{}", "null")
    ),
    position: fc.nat(),
    duplicate: fc.integer({ min: 0, max: 9 }),
    trailing: fc.boolean(),
    end: trivia,
    tail: trivia
  })
  .map((c) => {
    const props = c.props.map(([t, k, t2, v]) => `${t}${k}${t2}:${v}`)
    // keys the generator happens to spell "plugin" would be duplicates of their own: renamed
    const clean = props.map((p) => p.replace(/"plugin"(?=[^"]*:)/g, '"pluginx"'))
    if (c.plugin !== undefined) clean.splice(c.position % (clean.length + 1), 0, `\n  "plugin": ${c.plugin}`)
    const duplicate = c.plugin !== undefined && c.duplicate === 0
    if (duplicate) clean.push(`"plugin": []`)
    const body = `${c.lead}{${clean.join(",")}${c.trailing && clean.length > 0 ? "," : ""}${c.end}}${c.tail}`
    const pluginKind = c.plugin === undefined ? "absent" : c.plugin.startsWith("[") ? "array" : "other"
    return { text: `${c.bom ? "\xef\xbb\xbf" : ""}${body}`, duplicate, pluginKind } as const
  })

const meaning = (text: string): unknown => parse(text.startsWith("\xef\xbb\xbf") ? text.slice(3) : text, [], { allowTrailingComma: true })

/** Whether `small` is `big` with some characters taken out. */
const subsequence = (small: string, big: string): boolean => {
  let i = 0
  for (let j = 0; j < big.length && i < small.length; j++) if (big[j] === small[i]) i++
  return i === small.length
}

const nameOf = (e: unknown): string | undefined => (typeof e === "string" ? e : Array.isArray(e) && typeof e[0] === "string" ? e[0] : undefined)
const isOurs = (e: unknown): boolean => {
  const n = nameOf(e)
  return n !== undefined && isOurName(n)
}

describe("fuzz: init over random JSONC", () => {
  it(
    "US-15 an add only inserts bytes, a remove only deletes them, the result means exactly the edit, and duplicate plugin keys are always refused",
    () => {
      fc.assert(
        fc.property(config, (c) => {
          const before = meaning(c.text) as Record<string, unknown>
          const added = addPluginEntry(c.text, ENTRY)
          const removed = removePluginEntry(c.text)
          if (c.duplicate) {
            expect(added._tag).toBe("Invalid")
            expect(removed._tag).toBe("Invalid")
            return
          }
          if (c.pluginKind === "other") {
            expect(added).toMatchObject({ _tag: "Invalid", reason: '"plugin" is not an array' })
            return
          }
          expect(added._tag, JSON.stringify(added)).not.toBe("Invalid")
          const plugins = Array.isArray(before.plugin) ? (before.plugin as Array<unknown>) : undefined
          if (added._tag === "Unchanged") expect(plugins?.some(isOurs)).toBe(true)
          if (added._tag === "Changed") {
            expect(subsequence(c.text, added.text)).toBe(true)
            expect(meaning(added.text)).toEqual({ ...before, plugin: [...(plugins ?? []), ENTRY] })
            // the edit is undone by a remove, in meaning
            const back = removePluginEntry(added.text)
            expect(back._tag).toBe("Changed")
            if (back._tag === "Changed") {
              const { plugin: _p, ...rest } = before
              const keep = (plugins ?? []).filter((e) => !isOurs(e))
              expect(meaning(back.text)).toEqual(keep.length > 0 ? { ...rest, plugin: keep } : rest)
            }
          }
          if (removed._tag === "Unchanged") expect(plugins?.some(isOurs) ?? false).toBe(false)
          if (removed._tag === "Changed") {
            expect(subsequence(removed.text, c.text)).toBe(true)
            const { plugin: _p, ...rest } = before
            const keep = (plugins ?? []).filter((e) => !isOurs(e))
            expect(meaning(removed.text)).toEqual(keep.length > 0 ? { ...rest, plugin: keep } : rest)
          }
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(5)
  )
})

ensureBuilt("init --help")
const made: Array<string> = []
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

describe("fuzz: init through the CLI, killed at a random moment", () => {
  const SAMPLE = Math.max(4, Math.min(24, Math.round(FUZZ_RUNS / 400)))
  it(
    "US-15 the config is always the old bytes or the edited bytes, never a partial write",
    async () => {
      const entry = pathToFileURL(join(root, "dist", "opencode-plugin.js")).href
      const samples = fc.sample(fc.tuple(config.filter((c) => !c.duplicate && c.pluginKind !== "other"), fc.integer({ min: 0, max: 600 })), { numRuns: SAMPLE, seed: fuzzParams().seed ?? 1 })
      for (const [c, killAfter] of samples) {
        const home = mkdtempSync(join(tmpdir(), "ocpool-fuzz-init-"))
        made.push(home)
        const dir = join(home, ".config", "opencode")
        mkdirSync(dir, { recursive: true })
        mkdirSync(join(home, ".config", "opencode-pool"), { recursive: true })
        writeFileSync(join(home, ".config", "opencode-pool", "pool.txt"), "a/b 1\n")
        const path = join(dir, "opencode.json")
        writeFileSync(path, Buffer.from(c.text, "latin1"))
        const expected = addPluginEntry(c.text, entry, (n) => n === entry)
        const child = spawn(process.execPath, [cli, "init", "--global"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdio: "ignore" })
        const exited = new Promise<void>((done) => child.on("exit", () => done()))
        await new Promise((r) => setTimeout(r, killAfter))
        child.kill("SIGKILL")
        await exited
        const now = readFileSync(path).toString("latin1")
        expect([c.text, expected._tag === "Changed" ? expected.text : c.text]).toContain(now)
      }
    },
    fuzzTimeout(2_000, 24)
  )
})
