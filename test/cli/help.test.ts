/**
 * Help and usage errors (issue 33, item 11): the command list grouped like git's, one line each; each
 * command's page compact and wrapped to the terminal; a usage error one line naming the problem plus
 * that command's usage; a flag without its value reported as missing; "did you mean" for typos.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { docs, runCli } from "../../src/cli/app.js"
import { HELP_COMMANDS } from "../../src/cli/fastRoute.js"
import { CATALOG, CATALOG_ENTRIES } from "../../src/cli/help/catalog.js"
import { nearest } from "../../src/cli/help/problems.js"
import { wrapHelp } from "../../src/cli/help/wrap.js"
import { captureStream, type CliIo } from "../../src/cli/output.js"
import { ensureBuilt, root } from "./builtCli.js"

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const stdout = captureStream(false)
    const stderr = captureStream(false)
    const io: CliIo = { stdout, stderr, stdinIsTTY: false, env }
    const code = yield* runCli(["node", "ocpool", ...args], io)
    return { code, stdout: stdout.text, stderr: stderr.text }
  })

const BOILERPLATE = /This setting is optional|A true or false value|A user-defined piece of text|--completions|--log-level|--wizard/

describe("help pages", () => {
  it.effect("US-46 `ocpool --help` is the commands grouped by feature, one line each, within 80 columns", () =>
    Effect.gen(function* () {
      const r = yield* run(["--help"])
      expect(r.code).toBe(0)
      const lines = r.stdout.trimEnd().split("\n")
      expect(lines.length).toBeLessThanOrEqual(45)
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80)
      expect(CATALOG.map((g) => g.title)).toEqual(["pool", "limits", "notifications", "database", "heavy work", "fleet", "context", "views"])
      // each group's title, then its commands, each on a line of its own
      for (const group of CATALOG) {
        const at = lines.indexOf(group.title)
        expect(at, group.title).toBeGreaterThan(0)
        group.entries.forEach((e, i) => expect(lines[at + 1 + i]).toMatch(new RegExp(`^  ${e.path.join(" ")} +\\S`)))
      }
      expect(r.stdout).not.toMatch(BOILERPLATE)
    })
  )

  it.effect("US-46 every command of the tree is listed, and every page is pre-rendered for the fast path", () =>
    Effect.gen(function* () {
      const paths = docs().map((d) => d.path.join(" "))
      const listed = new Set(CATALOG_ENTRIES.map((e) => e.path.join(" ")))
      // a leaf is listed itself or through its parent (`cool` for `cool set`); a group through its commands
      for (const d of docs().filter((d) => d.path.length > 0 && d.subcommands.length === 0)) {
        expect(listed.has(d.path.join(" ")) || listed.has(d.path.slice(0, -1).join(" ")), d.path.join(" ")).toBe(true)
      }
      for (const e of CATALOG_ENTRIES) expect(paths, e.path.join(" ")).toContain(e.path.join(" "))
      expect(new Set(HELP_COMMANDS.map((p) => p.join(" ")))).toEqual(new Set(paths))
    })
  )

  it.effect("US-46 a command's page: usage, description, one entry per flag, no boilerplate, wrapped to $COLUMNS", () =>
    Effect.gen(function* () {
      for (const path of HELP_COMMANDS.filter((p) => p.length > 0)) {
        const r = yield* run([...path, "--help"], { COLUMNS: "60" })
        expect(r.code, path.join(" ")).toBe(0)
        expect(r.stdout, path.join(" ")).toMatch(new RegExp(`^usage: ocpool ${path.join(" ")}[ \\n]`))
        expect(r.stdout, path.join(" ")).not.toMatch(BOILERPLATE)
        // only a single word longer than the width may pass it (a JSON shape, a URL)
        for (const line of r.stdout.split("\n")) if (line.length > 60) expect(line.trim(), line).not.toContain(" ")
      }
      const status = yield* run(["status", "--help"], { COLUMNS: "60" })
      expect(status.stdout).toMatch(/^ {2}--pool FILE +Pool file to show/m)
      expect(status.stdout).toMatch(/^ {2}-h, --help +this help$/m)
      const sweep = yield* run(["sweep", "--help"])
      expect(sweep.stdout).toMatch(/^commands:\n {2}sessions +retire old sessions/m)
    })
  )

  it("US-46 wrapping keeps a hanging indent and a bracketed group whole", () => {
    const text = "usage: ocpool status \t[--pool FILE] [--json] [--state-dir DIR] [--watch] [--trace FILE]\n  --pool FILE  \tPool file to show (default: the user config directory, then the bundled preset)"
    expect(wrapHelp(text, 50).split("\n")).toEqual([
      "usage: ocpool status [--pool FILE] [--json]",
      "                     [--state-dir DIR] [--watch]",
      "                     [--trace FILE]",
      "  --pool FILE  Pool file to show (default: the",
      "               user config directory, then the",
      "               bundled preset)"
    ])
  })

  it("US-46 the built entry wraps the pre-rendered help to $COLUMNS, as the command tree does", () => {
    ensureBuilt("cool set --help")
    const env = { ...process.env, COLUMNS: "50", NO_COLOR: "1" }
    const r = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "status", "--help"], { encoding: "utf8", env })
    expect(r.status).toBe(0)
    for (const line of r.stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(50)
    expect(r.stdout).toMatch(/^usage: ocpool status \[--pool FILE\]/)
  })
})

describe("usage errors", () => {
  it.effect("US-46 one line naming the problem, that command's usage and where its help is; nothing on stdout; exit 2", () =>
    Effect.gen(function* () {
      const r = yield* run(["status", "--pol", "x"])
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      const lines = r.stderr.trimEnd().split("\n")
      expect(lines[0]).toBe("ocpool: status: unknown flag '--pol' (did you mean '--pool'?)")
      expect(lines[1]).toMatch(/^usage: ocpool status \[--pool FILE\]/)
      // named as it runs from here: inside the checkout, npx ocpool
      expect(lines[lines.length - 1]).toBe("'npx ocpool status --help' shows its flags.")
      expect(lines.length).toBeLessThanOrEqual(4)
      expect(r.stderr).not.toMatch(/doctor|sweep|permits/)
    })
  )

  it.effect("US-46 a mistyped command gets 'did you mean', at the top and below a group", () =>
    Effect.gen(function* () {
      const top = yield* run(["sttus"])
      expect(top.code).toBe(2)
      expect(top.stderr.split("\n")[0]).toBe("ocpool: unknown command 'sttus' (did you mean 'status'?)")
      expect(top.stderr).toContain("'npx ocpool --help' shows the commands.")
      const sub = yield* run(["sweep", "evnts"])
      expect(sub.stderr.split("\n")[0]).toBe("ocpool: sweep: unknown command 'evnts' (did you mean 'events'?)")
      const help = yield* run(["contxt", "--help"])
      expect(help.code).toBe(2)
      expect(help.stderr.split("\n")[0]).toBe("ocpool: unknown command 'contxt' (did you mean 'context'?)")
      const far = yield* run(["banana"])
      expect(far.stderr.split("\n")[0]).toBe("ocpool: unknown command 'banana'")
    })
  )

  it.effect("US-46 a flag without its value is reported as missing, also when a flag follows it", () =>
    Effect.gen(function* () {
      for (const args of [["status", "--pool"], ["status", "--pool", "--json"], ["cost", "--since"]]) {
        const r = yield* run(args)
        expect(r.code, args.join(" ")).toBe(2)
        expect(r.stderr.split("\n")[0], args.join(" ")).toMatch(/^ocpool: (status|cost): --(pool|since) needs a value \(--(pool FILE|since DURATION)\)$/)
      }
      const missingFlag = yield* run(["cool", "set", "zen/a"])
      expect(missingFlag.stderr.split("\n")[0]).toBe("ocpool: cool set: missing flag --for")
      const missingArg = yield* run(["permits", "release"])
      expect(missingArg.stderr.split("\n")[0]).toBe("ocpool: permits release: missing argument <ID>")
      const choice = yield* run(["init", "--format", "xml"])
      expect(choice.stderr.split("\n")[0]).toBe("ocpool: init: --format takes txt, json, not 'xml'")
      for (const args of [["status", "--json", "--json"], ["status", "--pool", "a", "--pool", "b"]]) {
        const twice = yield* run(args)
        expect(twice.stderr.split("\n")[0], args.join(" ")).toMatch(/^ocpool: status: --(json|pool) given more than once$/)
      }
      const extra = yield* run(["status", "extra"])
      expect(extra.stderr.split("\n")[0]).toBe("ocpool: status: unexpected argument 'extra'")
    })
  )

  it.effect("US-46 every flag before -- is checked: a typo before a positional, a flag between a group and its command, an empty --flag=, words after --", () =>
    Effect.gen(function* () {
      const first = (args: ReadonlyArray<string>) => Effect.map(run(args), (r) => `${r.code} ${r.stderr.split("\n")[0]}`)
      expect(yield* first(["replay", "--explian", "x.jsonl"])).toBe("2 ocpool: replay: unknown flag '--explian' (did you mean '--explain'?)")
      expect(yield* first(["permits", "release", "--forc", "3"])).toBe("2 ocpool: permits release: unknown flag '--forc' (did you mean '--force'?)")
      expect(yield* first(["run", "--wiat", "1s", "true"])).toBe("2 ocpool: run: unknown flag '--wiat' (did you mean '--wait'?)")
      expect(yield* first(["sweep", "--json"])).toBe("2 ocpool: sweep: unknown flag '--json'")
      expect(yield* first(["--versoin"])).toBe("2 ocpool: unknown flag '--versoin' (did you mean '--version'?)")
      expect(yield* first(["status", "--pool="])).toBe("2 ocpool: status: --pool needs a value (--pool FILE)")
      expect(yield* first(["status", "--", "--json"])).toBe("2 ocpool: status: unexpected argument '--json' (after --, every word is an argument)")
      expect(yield* first(["--", "status"])).toBe("2 ocpool: '--' ends the flags: the command comes first (ocpool <command> … -- …)")
      // a letter is not a typo of another letter
      expect(yield* first(["status", "-j"])).toBe("2 ocpool: status: unknown flag '-j'")
    })
  )

  it.effect("US-46 -h as a flag's value is the value, not a request for help; --version is the version alone", () =>
    Effect.gen(function* () {
      const r = yield* run(["replay", "--pool", "-h"])
      expect(r.stdout).not.toContain("usage:")
      expect(r.stderr).toContain("-h")
      const v = yield* run(["--version"])
      expect(v.stdout).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?\n$/)
    })
  )

  it("US-46 'did you mean' only for a near word", () => {
    expect(nearest("--jsn", ["--json", "--pool"])).toBe("--json")
    expect(nearest("--pol", ["--json", "--pool"])).toBe("--pool")
    expect(nearest("statsu", ["status", "top"])).toBe("status")
    expect(nearest("--xyz", ["--json", "--pool"])).toBeUndefined()
    expect(nearest("perm", ["permits", "run"])).toBe("permits")
  })
})
