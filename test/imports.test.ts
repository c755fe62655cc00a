/**
 * The import boundaries of docs/ARCHITECTURE.md (issue 20): `src/core` imports only `src/core` and pure
 * packages (no I/O: that is what lets a recorded trace replay to the same decisions, US-45), and no
 * service or layer imports the plugin or the CLI; since issue 34 also: the CLI never imports the plugin,
 * no service imports a layer, there is no import circle anywhere in `src`, and one module starts every
 * child process. Every import of every source file is resolved and checked; one across a boundary
 * fails here.
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const SRC = resolve(import.meta.dirname, "..", "src")

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : []
  })

/** `from "…"` and `import("…")` specifiers of a file. */
const specifiers = (file: string): ReadonlyArray<string> =>
  [...readFileSync(file, "utf8").matchAll(/(?:from\s+|import\s*\(\s*|import\s+)"([^"]+)"/g)].map((m) => m[1]!)

/** The top folder under src/ of a file or resolved import (`core`, `layers`, …). */
const areaOf = (path: string): string => relative(SRC, path).split("/")[0]!

const imports = sources(SRC).flatMap((file) =>
  specifiers(file).map((spec) => ({ file: relative(SRC, file), spec, area: areaOf(file), target: spec.startsWith(".") ? areaOf(resolve(dirname(file), spec)) : undefined }))
)

/** The source file a relative import names (`./x.js` is `./x.ts`), relative to src/; undefined if it names none. */
const fileOf = (from: string, spec: string): string | undefined => {
  const target = resolve(dirname(join(SRC, from)), spec).replace(/\.js$/, ".ts")
  return existsSync(target) && statSync(target).isFile() ? relative(SRC, target) : undefined
}

/** The import graph of src/: every file to the files its relative imports name (type imports included). */
const graph: ReadonlyMap<string, ReadonlyArray<string>> = new Map(
  sources(SRC).map((file) => {
    const from = relative(SRC, file)
    return [from, [...new Set(specifiers(file).flatMap((spec) => (spec.startsWith(".") ? [fileOf(from, spec)].filter((t) => t !== undefined) : [])))].sort()] as const
  })
)

/**
 * The import circles of `g`: its strongly connected components of more than one file, or of one file
 * that imports itself (Tarjan), each as its files sorted and joined by ` <-> `, sorted.
 */
const cycles = (g: ReadonlyMap<string, ReadonlyArray<string>>): ReadonlyArray<string> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: Array<string> = []
  const found: Array<string> = []
  let next = 0
  const visit = (v: string): void => {
    index.set(v, next)
    low.set(v, next)
    next++
    stack.push(v)
    onStack.add(v)
    for (const w of g.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const component: Array<string> = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    if (component.length > 1 || (g.get(v) ?? []).includes(v)) found.push(component.sort().join(" <-> "))
  }
  for (const v of [...g.keys()].sort()) if (!index.has(v)) visit(v)
  return found.sort()
}

/** The packages the core may use: pure code only (effect's data types, a JSONC parser, Unicode's East Asian Width table, path and string helpers). */
const PURE_PACKAGES: ReadonlySet<string> = new Set(["effect", "get-east-asian-width", "jsonc-parser", "node:path", "node:util"])


describe("import boundaries (issue 20)", () => {
  it("US-45 src/core imports only src/core and pure packages (effect, get-east-asian-width, jsonc-parser, node:path, node:util)", () => {
    const bad = imports.filter((i) => i.area === "core" && (i.target !== undefined ? i.target !== "core" : !PURE_PACKAGES.has(i.spec.split("/")[0]!)))
    expect(bad.map((i) => `${i.file} -> ${i.spec}`)).toEqual([])
  })

  it("US-45 src/web (the timeline page's script, bundled for a browser) imports only src/web and src/core", () => {
    const bad = imports.filter((i) => i.area === "web" && i.target !== "core" && i.target !== "web")
    expect(bad.map((i) => `${i.file} -> ${i.spec}`)).toEqual([])
    expect(imports.some((i) => i.area === "web" && i.target === "core")).toBe(true)
  })

  it("US-45 no service or layer imports the plugin or the CLI", () => {
    const bad = imports.filter((i) => (i.area === "services" || i.area === "layers") && (i.target === "plugin" || i.target === "cli"))
    expect(bad.map((i) => `${i.file} -> ${i.spec}`)).toEqual([])
  })

  it("US-45 src/plugin and src/cli reach shared state only through the port: no shared-state backend module or record part, only the selector", () => {
    // what they may import from src/layers/state: the selector, and the state directory's resolution
    // (doctor asks the port what the backend says of its database: `SharedState.inspect`, issue 34)
    const allowed = new Set(["layers/state/sharedStateLayer.ts", "layers/state/StateDirFile.ts"])
    // and from src/services/state: the port and the state directory
    const ports = new Set(["services/state/SharedState.ts", "services/state/StateDir.ts"])
    const bad = imports.filter((i) => {
      if ((i.area !== "plugin" && i.area !== "cli") || !i.spec.startsWith(".")) return false
      const target = relative(SRC, resolve(dirname(join(SRC, i.file)), i.spec)).replace(/\.js$/, ".ts")
      if (target.startsWith("layers/state/")) return !allowed.has(target)
      if (target.startsWith("services/state/")) return !ports.has(target)
      return false
    })
    expect(bad.map((i) => `${i.file} -> ${i.spec}`)).toEqual([])
    // the rule sees what it judges: the plugin's live layers and the CLI's state view reach the selector
    expect(imports.filter((i) => /layers\/state\/sharedStateLayer\.js$/.test(i.spec)).map((i) => i.area).sort()).toEqual(expect.arrayContaining(["cli", "plugin"]))
  })

  it("US-45 no file in src is over 450 lines (issue 34: modules named for what they do, small enough to read)", () => {
    const long = sources(SRC)
      .map((f) => ({ file: relative(SRC, f), lines: readFileSync(f, "utf8").split("\n").length - 1 }))
      .filter((f) => f.lines > 450)
    expect(long).toEqual([])
  })

  it("US-45 src/cli never imports src/plugin (the drivers that boot the plugin are development entries, src/dev)", () => {
    const bad = imports.filter((i) => i.area === "cli" && i.target === "plugin")
    expect(bad.map((i) => `${i.file} -> ${i.spec}`)).toEqual([])
  })

  it("US-45 src/services never imports src/layers (a service is an interface; its layers implement it)", () => {
    const bad = imports.filter((i) => i.area === "services" && i.target === "layers")
    expect(bad.map((i) => `${i.file} -> ${i.spec}`)).toEqual([])
  })

  it("US-45 one process runner: src/layers/process/runner.ts is the only module of src that imports node:child_process (issue 34)", () => {
    const spawners = imports.filter((i) => i.spec === "node:child_process" || i.spec === "child_process").map((i) => i.file)
    expect([...new Set(spawners)]).toEqual(["layers/process/runner.ts"])
  })

  it("US-45 no import circle anywhere in src (every relative import, type imports included)", () => {
    expect(cycles(graph)).toEqual([])
  })

  it("US-45 the circle check finds circles (Tarjan over a small graph)", () => {
    const g = new Map<string, ReadonlyArray<string>>([
      ["a", ["b"]],
      ["b", ["c", "d"]],
      ["c", ["a"]],
      ["d", ["e"]],
      ["e", []],
      ["f", ["f"]],
      ["g", ["a"]]
    ])
    expect(cycles(g)).toEqual(["a <-> b <-> c", "f"])
    expect(cycles(new Map([["x", ["y"]], ["y", []]]))).toEqual([])
  })

  it("US-45 the check sees imports at all (it would pass vacuously on a wrong path)", () => {
    expect(imports.filter((i) => i.area === "core").length).toBeGreaterThan(100)
    expect(imports.some((i) => i.area === "layers" && i.target === "core")).toBe(true)
    expect(imports.some((i) => i.area === "plugin" && i.target === "core")).toBe(true)
    // the circle check's graph: every relative import resolved to a source file
    expect(imports.filter((i) => i.spec.startsWith(".") && fileOf(i.file, i.spec) === undefined).map((i) => `${i.file} -> ${i.spec}`)).toEqual([])
    expect([...graph.values()].reduce((n, ts) => n + ts.length, 0)).toBeGreaterThan(1000)
    expect(graph.get("dev/fleetDrive.ts")).toContain("dev/fleetDriveRun.ts")
  })
})
