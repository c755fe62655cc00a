import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll } from "vitest"
import { cli, root } from "./builtCli.js"

const traces = join(root, "test/fixtures/traces")

/** Runs the built CLI (the same file `npx ocpool` runs). */
const ocpool = (args: ReadonlyArray<string>, input?: string) => {
  const r = spawnSync(process.execPath, [cli, ...args], { input, encoding: "utf8", timeout: 30_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

// built unless dist/ already knows the flag (the help is rendered from the bundle at build time)
beforeAll(() => {
  const help = join(root, "dist/help.json")
  const known = existsSync(help) && JSON.stringify((JSON.parse(readFileSync(help, "utf8")) as Record<string, unknown>)["replay --help"] ?? "").includes("--timeline")
  if (!known) execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })
}, 180_000)

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-timeline-"))

describe("US-45 ocpool replay --timeline", () => {
  it("US-45 writes a self-contained .html page and a static .svg for a fixture; stdout is the decisions file, byte for byte", () => {
    const dir = tmp()
    const decisions = readFileSync(join(traces, "hang.decisions.jsonl"), "utf8")
    const plain = ocpool(["replay", join(traces, "hang.jsonl")])
    expect(plain.stdout).toBe(decisions)
    for (const name of ["hang.html", "hang.svg", "HANG.SVG"]) {
      const file = join(dir, name)
      const r = ocpool(["replay", join(traces, "hang.jsonl"), "--timeline", file])
      expect(r.code).toBe(0)
      expect(r.stdout).toBe(decisions)
      expect(r.stderr).toBe(`timeline: 2 bars, 1 cooldowns, 1 marks -> ${file}\n`)
      const body = readFileSync(file, "utf8")
      expect(body).toContain("hang.jsonl")
      if (name.endsWith(".html")) {
        expect(body).toMatch(/^<!doctype html>/i)
        // self-contained: nothing fetched from elsewhere
        expect(body).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!www\.w3\.org)/i)
      } else {
        expect(body).toMatch(/^(<\?xml[^>]*>\s*)?<svg[\s>]/)
      }
    }
    // written whole: no temporary file left beside it
    expect(readdirSync(dir).sort()).toEqual(["HANG.SVG", "hang.html", "hang.svg"])
  })

  it("US-45 the flag changes nothing else: --expect still matches, --explain still explains, stdin names the page 'stdin'", () => {
    const dir = tmp()
    const file = join(dir, "t.html")
    const r = ocpool(["replay", join(traces, "abort-in-flight.jsonl"), "--expect", join(traces, "abort-in-flight.decisions.jsonl"), "--explain", "--timeline", file])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(readFileSync(join(traces, "abort-in-flight.decisions.jsonl"), "utf8"))
    expect(r.stderr).toContain("c1: explore -> explore-1 (zen/alpha), slot 1 in the first pass")
    expect(r.stderr).toContain("ocpool: 7 decisions match")
    expect(r.stderr).toContain(`timeline: 3 bars, 1 cooldowns, 1 marks -> ${file}`)
    const piped = ocpool(["replay", "--timeline", join(dir, "s.svg"), "-"], readFileSync(join(traces, "task-spawn.jsonl"), "utf8"))
    expect(piped.code).toBe(0)
    expect(piped.stdout).toBe(readFileSync(join(traces, "task-spawn.decisions.jsonl"), "utf8"))
    expect(readFileSync(join(dir, "s.svg"), "utf8")).toContain("stdin")
  })

  it("US-45 --timeline x.png is a usage error: exit 2, one line, before the trace is read; nothing written", () => {
    const dir = tmp()
    for (const name of ["x.png", "x", "html", "x.html.txt"]) {
      const r = ocpool(["replay", join(dir, "missing.jsonl"), "--timeline", join(dir, name)])
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr.split("\n")).toHaveLength(2)
      expect(r.stderr).toBe(`ocpool: --timeline ${join(dir, name)}: the name must end in .html (an interactive page) or .svg (a static picture)\n`)
    }
    expect(readdirSync(dir)).toEqual([])
  })

  it("US-45 a timeline that cannot be written is one line and exit 1, after the decisions; an invalid trace writes no timeline", () => {
    const dir = tmp()
    const r = ocpool(["replay", join(traces, "task-spawn.jsonl"), "--timeline", join(dir, "no/such/dir/t.html")])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe(readFileSync(join(traces, "task-spawn.decisions.jsonl"), "utf8"))
    expect(r.stderr).toBe(`ocpool: ${join(dir, "no/such/dir/t.html")}: cannot write the timeline: no such directory\n`)
    writeFileSync(join(dir, "bad.jsonl"), `${readFileSync(join(traces, "task-spawn.jsonl"), "utf8")}{"at":1,"type":"nope"}\n`)
    const bad = ocpool(["replay", join(dir, "bad.jsonl"), "--timeline", join(dir, "bad.html")])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/line 13: /)
    expect(existsSync(join(dir, "bad.html"))).toBe(false)
  })
})
