import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll } from "vitest"

const root = new URL("../../", import.meta.url).pathname
const cli = join(root, "bin/ocpool.js")
const fixture = (p: string) => join(root, "test/fixtures", p)

/** Runs the built CLI (the same file `npx ocpool` runs). */
const ocpool = (args: ReadonlyArray<string>, input?: string) => {
  const r = spawnSync(process.execPath, [cli, ...args], { input, encoding: "utf8", timeout: 30_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

beforeAll(() => {
  if (!existsSync(join(root, "dist/cli.js"))) execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })
})

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-cli-"))

describe("ocpool replay (SPEC §12.2)", () => {
  it("US-45 the shipped example replays to the TRACE.md §5.1 output, byte for byte", () => {
    const r = ocpool(["replay", join(root, "examples/two-pass.jsonl")])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(readFileSync(fixture("trace-md/two-pass.decisions.jsonl"), "utf8"))
    expect(r.stderr).toBe("")
  })

  it("US-45 an empty trace (a file, stdin, blank lines only) says so on stderr and exits 0 (issue 33)", () => {
    const dir = tmp()
    const empty = join(dir, "empty.jsonl")
    writeFileSync(empty, "")
    const file = ocpool(["replay", empty])
    expect(file).toEqual({ code: 0, stdout: "", stderr: `ocpool: ${empty}: the trace is empty (no input lines): nothing replayed\n` })
    const stdin = ocpool(["replay", "-"], "\n  \n")
    expect(stdin).toEqual({ code: 0, stdout: "", stderr: "ocpool: stdin: the trace is empty (no input lines): nothing replayed\n" })
  })

  it("US-45 flags after - are read: `replay - --expect F --json` is `replay --expect F --json -` (issue 33)", () => {
    const trace = readFileSync(join(root, "examples/two-pass.jsonl"), "utf8")
    const decisions = fixture("trace-md/two-pass.decisions.jsonl")
    for (const args of [["replay", "-", "--expect", decisions], ["replay", "-", "--expect", decisions, "--json"], ["replay", "--expect", decisions, "-"]]) {
      const r = ocpool(args, trace)
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toContain("20 decisions match")
    }
    // a `-` that is an option's value stays that option's
    expect(ocpool(["replay", "--pool", "-", "-"], trace).stderr).not.toContain("Received unknown argument")
  })

  it("US-45 --expect exits 0 on a match and 1 with the first differing line on a mismatch", () => {
    const ok = ocpool(["replay", fixture("trace-md/retry-after.jsonl"), "--expect", fixture("trace-md/retry-after.decisions.jsonl")])
    expect(ok.code).toBe(0)
    const dir = tmp()
    const wrong = readFileSync(fixture("trace-md/retry-after.decisions.jsonl"), "utf8").replace('"strike":1', '"strike":2')
    writeFileSync(join(dir, "wrong.jsonl"), wrong)
    const bad = ocpool(["replay", fixture("trace-md/retry-after.jsonl"), "--expect", join(dir, "wrong.jsonl")])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/^ocpool: line 2: expected \{.*"strike":2\} \| got \{.*"strike":1\}\n$/)
  })

  it("US-45 --expect with fewer or more expected lines shows <none> on the missing side; a missing final newline is ignored", () => {
    const dir = tmp()
    const full = readFileSync(fixture("trace-md/retry-after.decisions.jsonl"), "utf8")
    writeFileSync(join(dir, "short.jsonl"), full.split("\n").slice(0, 3).join("\n"))
    writeFileSync(join(dir, "long.jsonl"), `${full}{"extra":true}\n`)
    writeFileSync(join(dir, "nonl.jsonl"), full.trimEnd())
    const short = ocpool(["replay", fixture("trace-md/retry-after.jsonl"), "--expect", join(dir, "short.jsonl")])
    expect(short.code).toBe(1)
    expect(short.stderr).toMatch(/^ocpool: line 4: expected <none> \| got \{/)
    const long = ocpool(["replay", fixture("trace-md/retry-after.jsonl"), "--expect", join(dir, "long.jsonl")])
    expect(long.code).toBe(1)
    expect(long.stderr).toBe('ocpool: line 8: expected {"extra":true} | got <none>\n')
    expect(ocpool(["replay", fixture("trace-md/retry-after.jsonl"), "--expect", join(dir, "nonl.jsonl")]).code).toBe(0)
  })

  it("US-45 --explain prints one sentence per decision on stderr naming the slot, the pass and the loads; stdout unchanged", () => {
    const r = ocpool(["replay", join(root, "examples/two-pass.jsonl"), "--explain"])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(readFileSync(fixture("trace-md/two-pass.decisions.jsonl"), "utf8"))
    const sentences = r.stderr.trimEnd().split("\n")
    expect(sentences).toHaveLength(20)
    expect(sentences[14]).toBe(
      "c15: explore -> explore-3 (go/gamma), slot 3 in the overflow pass: every usable slot is at twice its weight, so the least-loaded usable slot takes it (ties to the lowest index); loads [6,4,2,2] against weights [3,2,1,1]."
    )
    expect(sentences[0]).toContain("slot 1 in the first pass")
    expect(sentences[7]).toContain("slot 1 in the second pass")
  })

  it("US-45 a decreasing at on line 7 exits 1 naming the line; stdin works with - or no file", () => {
    const lines = readFileSync(join(root, "examples/two-pass.jsonl"), "utf8").split("\n")
    lines[6] = JSON.stringify({ at: 1, type: "status" })
    const r = ocpool(["replay", "-"], lines.join("\n"))
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('ocpool: stdin: line 7: "at" decreased: 1 after 1796115605000\n')
    const noArg = ocpool(["replay"], readFileSync(join(root, "examples/two-pass.jsonl"), "utf8"))
    expect(noArg.code).toBe(0)
    expect(noArg.stdout.split("\n")).toHaveLength(21)
  })

  it("US-45 a spawn before any pool line exits 1 naming the line", () => {
    const r = ocpool(["replay"], '{"at":1,"type":"spawn","claim":"c","base":"explore"}\n')
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("ocpool: stdin: line 1: spawn before the first pool line\n")
  })

  it("US-45 invalid JSON, unknown type and a missing field exit 1 naming the line; never a stack trace", () => {
    for (const [input, msg] of [
      ['{"at":1,"type":"pool","slots":[{"model":"a/b"}]}\n{nope\n', "line 2: invalid JSON"],
      ['{"at":1,"type":"frob"}\n', 'line 1: unknown type "frob"'],
      ['{"at":1,"type":"pool","slots":[{"model":"a/b"}]}\n{"at":2,"type":"bind","claim":"c"}\n', 'line 2: missing required field "session"']
    ] as const) {
      const r = ocpool(["replay"], input)
      expect(r.code).toBe(1)
      expect(r.stderr).toContain(msg)
      expect(r.stderr.split("\n")).toHaveLength(2)
      expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/)
    }
  })

  it("US-45 a missing trace, pool or expect file is a one-line error with exit 2", () => {
    for (const args of [["replay", "/nonexistent/trace.jsonl"], ["replay", join(root, "examples/two-pass.jsonl"), "--pool", "/nonexistent/pool.txt"], ["replay", join(root, "examples/two-pass.jsonl"), "--expect", "/nonexistent/d.jsonl"]]) {
      const r = ocpool(args)
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(/^ocpool: cannot read \/nonexistent\/\S+: no such file or directory\n$/)
      expect(r.stdout).toBe("")
    }
  })

  it("US-45 --pool applies a pool file (flat form) before the first line, with its warnings on stderr", () => {
    const dir = tmp()
    writeFileSync(join(dir, "pool.txt"), "go/one 1 extra\nzen/two 2\n")
    writeFileSync(join(dir, "t.jsonl"), '{"at":5,"type":"spawn","claim":"c1","base":"explore"}\n{"at":6,"type":"status"}\n')
    const r = ocpool(["replay", join(dir, "t.jsonl"), "--pool", join(dir, "pool.txt")])
    expect(r.code).toBe(0)
    expect(r.stdout.split("\n")[0]).toBe('{"at":5,"type":"route","claim":"c1","base":"explore","slot":1,"model":"go/one","agent":"explore-1","pass":"first"}')
    expect(r.stderr).toBe(`ocpool: ${join(dir, "pool.txt")}: line 1: extra text ignored\n`)
    writeFileSync(join(dir, "bad.txt"), "nothing-here\n")
    const bad = ocpool(["replay", join(dir, "t.jsonl"), "--pool", join(dir, "bad.txt")])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain("is unusable")
  })

  it("US-45 --json is accepted and changes nothing", () => {
    const a = ocpool(["replay", join(root, "examples/two-pass.jsonl")])
    const b = ocpool(["replay", join(root, "examples/two-pass.jsonl"), "--json"])
    expect(b.stdout).toBe(a.stdout)
  })
})

describe("ocpool usage (SPEC §12.1)", () => {
  it("US-46 an unknown subcommand or flag prints usage to stderr and exits 2", () => {
    for (const args of [["frobnicate"], ["replay", "--bogus"], ["replay", "a", "b"], ["--nope"]]) {
      const r = ocpool(args)
      expect(r.code).toBe(2)
      expect(r.stderr).toContain("usage: ocpool")
      expect(r.stdout).toBe("")
    }
  })

  it("US-46 --help prints usage to stdout and exits 0; --version prints the package version", () => {
    const r = ocpool(["--help"])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("replay")
    const v = ocpool(["--version"])
    expect(v.code).toBe(0)
    expect(v.stdout.trim()).toBe(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version)
  })
})

describe("ocpool replay on hostile input (docs/OPERATIONS.md Limits)", () => {
  const example = join(root, "examples/two-pass.jsonl")
  const POOL_LINE = '{"at":1,"type":"pool","slots":[{"model":"zen/a"}]}'
  const quick = (args: ReadonlyArray<string>) => {
    const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 15_000, killSignal: "SIGKILL" })
    return { code: r.status, stdout: r.stdout, stderr: r.stderr }
  }
  const trace = (lines: ReadonlyArray<string>) => {
    const path = join(tmp(), "t.jsonl")
    writeFileSync(path, `${lines.join("\n")}\n`)
    return path
  }

  it("US-45 a symbolic link loop as the trace, --pool or --expect is one line and exit 2", () => {
    const loop = join(tmp(), "loop")
    symlinkSync(loop, loop)
    for (const args of [["replay", loop], ["replay", example, "--pool", loop], ["replay", example, "--expect", loop]]) {
      const r = quick(args)
      expect(r.code).toBe(2)
      expect(r.stderr).toBe(`ocpool: cannot read ${loop}: a symbolic link loop (too many symbolic links)\n`)
    }
  })

  it("US-45 a FIFO or /dev/zero as the trace or --expect is refused at once with exit 2", () => {
    const fifo = join(tmp(), "fifo")
    execFileSync("mkfifo", [fifo])
    for (const [args, reason] of [[["replay", fifo], "a FIFO"], [["replay", "/dev/zero"], "a character device"], [["replay", example, "--expect", fifo], "a FIFO"]] as const) {
      const r = quick(args)
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(new RegExp(`^ocpool: cannot read \\S+: not a regular file \\(${reason}\\)\\n$`))
    }
  })

  it("US-45 a line nested 5,000 levels deep is invalid for that reason, not a stack overflow", () => {
    const path = trace([POOL_LINE, `{"at":2,"type":"spawn","claim":"c","base":"explore","x":${"[".repeat(5000)}${"]".repeat(5000)}}`, `{"at":3,"type":"pool","slots":${"[".repeat(5000)}${"]".repeat(5000)}}`])
    const r = quick(["replay", path])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`ocpool: ${path}: line 2: nested too deeply (more than 64 levels)\n`)
  })

  it.each([
    ["an at beyond the date range", '{"at":9000000000000000,"type":"status"}', /line 2: field "at" must be within/],
    ["a peer cooldown beyond the date range", '{"at":2,"type":"status","peerCooling":[{"model":"zen/a","until":1e16,"reason":"rate_limit"}]}', /line 2: peerCooling\[0\]\.until must be a time within/],
    ["a retry next beyond the date range", '{"at":2,"type":"retry","session":"s","message":"busy","next":8640000000000001}', /line 2: field "next" must be within/]
  ])("US-45 out-of-range times are invalid values with a reason on stderr (--explain too): %s", (_, line, reason) => {
    const r = quick(["replay", "--explain", trace([POOL_LINE, line])])
    expect(r.code).toBe(1)
    expect(r.stderr.split("\n").filter((l) => l.startsWith("ocpool:"))).toHaveLength(1)
    expect(r.stderr).toMatch(reason)
  })

  it("US-45 a runaway line is refused by its length, and echoed values are cut to 80 characters", () => {
    const long = quick(["replay", trace([POOL_LINE, `{"at":2,"type":"status","pad":"${"x".repeat(2_000_000)}"}`])])
    expect(long.code).toBe(1)
    expect(long.stderr).toMatch(/: line 2: longer than 1048576 characters\n$/)
    const echoed = quick(["replay", trace([POOL_LINE, `{"at":2,"type":"${"y".repeat(100_000)}\\u001b[31m"}`])])
    expect(echoed.code).toBe(1)
    expect(echoed.stderr).toMatch(/: line 2: unknown type "y{80}…"\n$/)
    expect(echoed.stderr.length).toBeLessThan(400)
  })

  it("US-45 an --expect line that differs is echoed cut, never whole", () => {
    const expectFile = join(tmp(), "d.jsonl")
    writeFileSync(expectFile, `${"\u001b[2J".repeat(10)}${"z".repeat(1_000_000)}\n`)
    const r = quick(["replay", example, "--expect", expectFile])
    expect(r.code).toBe(1)
    expect(r.stderr.length).toBeLessThan(1200)
    // eslint-disable-next-line no-control-regex
    expect(r.stderr).not.toMatch(/\u001b/)
  })
})
