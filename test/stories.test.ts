/**
 * The coverage guard: every story that docs/STORIES.md lists as built (status `core`, `built` or
 * `partly built`) has at least one test whose title starts with its id, and every test title names a
 * story that exists. Test titles are read from the sources, so a skipped or renamed test shows here.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"

const root = new URL("../", import.meta.url).pathname
const BUILT = new Set(["core", "built", "partly built"])

const stories = readFileSync(join(root, "docs/STORIES.md"), "utf8")
  .split("\n")
  .flatMap((line) => {
    const m = /^\| (US-\d+) \| .*? \| (P\d) \| ([^|]+?) \|/.exec(line)
    return m === null ? [] : [{ id: m[1]!, status: m[3]!.trim() }]
  })

const testFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) return name === "fixtures" ? [] : testFiles(p)
    return name.endsWith(".test.ts") && !p.endsWith("stories.test.ts") ? [p] : []
  })

/** Titles of `it(...)`, `it.prop(...)`, `it.effect(...)`, `it.live(...)` and `it.each(...)(...)`. */
const titles = testFiles(join(root, "test")).flatMap((file) => {
  const src = readFileSync(file, "utf8")
  const found: Array<{ file: string; title: string }> = []
  for (const m of src.matchAll(/\bit(?:\.(?:prop|effect|live|scoped|only|skip))?\(\s*(["'`])((?:\\.|(?!\1)[^\\])*)\1/g)) found.push({ file, title: m[2]! })
  for (const m of src.matchAll(/\bit\.each\([\s\S]*?\)\(\s*(["'`])((?:\\.|(?!\1)[^\\])*)\1/g)) found.push({ file, title: m[2]! })
  return found
})

const idOf = (title: string): string | undefined => /^\[?(US-\d+)\b/.exec(title)?.[1]

describe("story coverage", () => {
  it("docs/STORIES.md lists every story of the specification", () => {
    expect(stories.length).toBeGreaterThanOrEqual(37)
  })

  it("every test title starts with a story id", () => {
    expect(titles.filter((t) => idOf(t.title) === undefined)).toEqual([])
    expect(titles.length).toBeGreaterThan(100)
  })

  it("every story id named by a test exists", () => {
    const known = new Set(stories.map((s) => s.id))
    expect(titles.filter((t) => !known.has(idOf(t.title)!)).map((t) => `${t.file}: ${t.title}`)).toEqual([])
  })

  it("every story listed as built has at least one test", () => {
    const tested = new Set(titles.map((t) => idOf(t.title)))
    expect(stories.filter((s) => BUILT.has(s.status) && !tested.has(s.id)).map((s) => s.id)).toEqual([])
  })

  it("no test is skipped or focused", () => {
    for (const file of testFiles(join(root, "test"))) expect(readFileSync(file, "utf8")).not.toMatch(/\b(it|describe)\.(skip|only)\(/)
  })
})
