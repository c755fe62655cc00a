/**
 * `ocpool init --mcp claude-code|codex|cursor|print [--remove] [--dry-run] [--force]` (issue 21): the
 * MCP server entry added to and taken out of each harness's user config with every other byte kept,
 * run in process (`runCli`) with HOME set to a temporary directory.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { parse as parseJsonc } from "jsonc-parser"
import { spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { parse as parseToml } from "smol-toml"
import { runCli } from "../../src/cli/app.js"
import { editJsonConfig, editTomlConfig, mcpConfigPath, type McpHarness } from "../../src/cli/initMcp.js"
import { captureStream } from "../../src/cli/output.js"
import { cli, linkedOcpoolDir } from "./builtCli.js"

/** A PATH whose `ocpool` is this checkout (as after `npm link`): the entry is `ocpool mcp`. */
const LINKED = linkedOcpoolDir()
const made: Array<string> = [LINKED]
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

const run = async (home: string, args: ReadonlyArray<string>, path: string = LINKED) => {
  const stdout = captureStream(false)
  const stderr = captureStream(false)
  const code = await Effect.runPromise(runCli(["node", "ocpool", "init", ...args], { stdout, stderr, stdinIsTTY: false, env: { HOME: home, PATH: path } }))
  return { code, stdout: stdout.text, stderr: stderr.text }
}

const home = () => mkdtempSync(join(tmpdir(), "ocpool-initmcp-"))
const put = (path: string, text: string, mode = 0o644) => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text, { mode })
  chmodSync(path, mode)
}
const read = (path: string) => readFileSync(path, "latin1")

const OURS = { command: "ocpool", args: ["mcp"] }

/** Whether `after` is `before` with one stretch inserted (every byte of `before` kept, in order, around it). */
const oneInsertion = (before: string, after: string): boolean => {
  let head = 0
  while (head < before.length && before[head] === after[head]) head++
  let tail = 0
  while (tail < before.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++
  return head + tail === before.length && after.length > before.length
}

const POPULATED_JSON = `{
  // my settings
  "theme": "dark", /* keep */
  "mcpServers": {
    "files": { "command": "files-server", "args": ["--root", "/tmp"] }, // a comment
  },
  "projects": { "/a": { "allowedTools": [] } },
}
`

const JSON_HARNESSES: ReadonlyArray<McpHarness> = ["claude-code", "cursor"]

describe("ocpool init --mcp (JSON configs)", () => {
  for (const harness of JSON_HARNESSES) {
    it(`US-51 ${harness}: a missing config is created with the entry (0600); again says present and writes nothing; --remove takes it out`, async () => {
      const h = home()
      const path = mcpConfigPath(harness, h)
      const first = await run(h, ["--mcp", harness])
      expect(first.code).toBe(0)
      expect(first.stdout).toContain(`add the MCP server "ocpool"`)
      expect(parseJsonc(read(path))).toEqual({ mcpServers: { ocpool: OURS } })
      expect(statSync(path).mode & 0o777).toBe(0o600)
      const mtime = statSync(path).mtimeMs
      const again = await run(h, ["--mcp", harness])
      expect(again).toMatchObject({ code: 0, stderr: "" })
      expect(again.stdout).toContain("already has the MCP server")
      expect(statSync(path).mtimeMs).toBe(mtime)
      const removed = await run(h, ["--mcp", harness, "--remove"])
      expect(removed.code).toBe(0)
      expect(parseJsonc(read(path))).toEqual({ mcpServers: {} })
      expect((await run(h, ["--mcp", harness, "--remove"])).stdout).toContain("nothing to remove")
    })

    it(`US-51 ${harness}: a populated config with comments keeps every other byte; add then remove gives the file back byte for byte, with its mode`, async () => {
      const h = home()
      const path = mcpConfigPath(harness, h)
      put(path, POPULATED_JSON, 0o640)
      expect((await run(h, ["--mcp", harness])).code).toBe(0)
      const added = read(path)
      expect(oneInsertion(POPULATED_JSON, added)).toBe(true)
      const doc = parseJsonc(added) as { mcpServers: Record<string, unknown>; theme: string }
      expect(doc.mcpServers).toEqual({ files: { command: "files-server", args: ["--root", "/tmp"] }, ocpool: OURS })
      expect(doc.theme).toBe("dark")
      expect(statSync(path).mode & 0o777).toBe(0o640)
      expect((await run(h, ["--mcp", harness, "--remove"])).code).toBe(0)
      expect(read(path)).toBe(POPULATED_JSON)
      expect(statSync(path).mode & 0o777).toBe(0o640)
    })
  }

  it("US-51 claude-code: a config without mcpServers gets the key appended; an empty one gets an object", async () => {
    const h = home()
    const path = mcpConfigPath("claude-code", h)
    const before = '{\n  "numStartups": 3,\n  "tipsHistory": {}\n}\n'
    put(path, before)
    expect((await run(h, ["--mcp", "claude-code"])).code).toBe(0)
    expect(oneInsertion(before, read(path))).toBe(true)
    expect(parseJsonc(read(path))).toEqual({ numStartups: 3, tipsHistory: {}, mcpServers: { ocpool: OURS } })
    put(path, "")
    expect((await run(h, ["--mcp", "claude-code"])).code).toBe(0)
    expect(parseJsonc(read(path))).toEqual({ mcpServers: { ocpool: OURS } })
  })

  it("US-51 an entry with other keys that runs ocpool mcp is present; one that runs something else is refused in one line without --force and replaced with it", async () => {
    const h = home()
    const path = mcpConfigPath("cursor", h)
    put(path, '{ "mcpServers": { "ocpool": { "type": "stdio", "command": "ocpool", "args": ["mcp"] } } }\n')
    expect((await run(h, ["--mcp", "cursor"])).stdout).toContain("already has")
    const other = '{\n  "mcpServers": {\n    "ocpool": { "command": "/opt/old/ocpool", "args": [] },\n    "x": {}\n  }\n}\n'
    put(path, other)
    const refused = await run(h, ["--mcp", "cursor"])
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim().split("\n")).toHaveLength(1)
    expect(refused.stderr).toContain(path)
    expect(refused.stderr).toContain("--force")
    expect(read(path)).toBe(other)
    const forced = await run(h, ["--mcp", "cursor", "--force"])
    expect(forced.code).toBe(0)
    expect(forced.stdout).toContain("replace")
    expect(parseJsonc(read(path))).toEqual({ mcpServers: { ocpool: OURS, x: {} } })
  })

  it("US-51 a config that does not parse is refused with one line naming the file, exit 2, nothing written", async () => {
    const h = home()
    for (const [harness, text] of [
      ["claude-code", '{ "mcpServers": { '],
      ["cursor", "[1, 2]"],
      ["cursor", '{ "mcpServers": [] }'],
      ["claude-code", '{ "mcpServers": {}, "mcpServers": {} }']
    ] as const) {
      const path = mcpConfigPath(harness, h)
      put(path, text)
      const r = await run(h, ["--mcp", harness])
      expect(r.code, text).toBe(2)
      expect(r.stderr.trim().split("\n"), text).toHaveLength(1)
      expect(r.stderr).toContain(path)
      expect(read(path)).toBe(text)
    }
  })

  it("US-51 --dry-run prints the diff and writes nothing; a symlinked config is edited at its target", async () => {
    const h = home()
    const path = mcpConfigPath("claude-code", h)
    put(path, '{ "a": 1 }\n')
    const dry = await run(h, ["--mcp", "claude-code", "--dry-run"])
    expect(dry.code).toBe(0)
    expect(dry.stdout).toContain('+{ "a": 1, "mcpServers": { "ocpool": { "command": "ocpool", "args": ["mcp"] } } }')
    expect(dry.stdout).toContain("dry run: nothing was written")
    expect(read(path)).toBe('{ "a": 1 }\n')
    const target = join(h, "real.json")
    put(target, "{}\n")
    const link = mcpConfigPath("cursor", h)
    mkdirSync(dirname(link), { recursive: true })
    symlinkSync(target, link)
    expect((await run(h, ["--mcp", "cursor"])).code).toBe(0)
    expect(parseJsonc(read(target))).toEqual({ mcpServers: { ocpool: OURS } })
    expect(statSync(link).isFile()).toBe(true)
  })

  it("US-51 property: adding to any object of other servers keeps every byte and parses to the same plus ours; removing gives the text back", () => {
    const key = fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/).filter((k) => k !== "ocpool" && k !== "mcpServers" && k !== "__proto__")
    fc.assert(
      fc.property(fc.dictionary(key, fc.record({ command: key, args: fc.array(key, { maxLength: 2 }) }), { maxKeys: 3 }), fc.boolean(), fc.constantFrom(0, 2, 4), (servers, withOther, indent) => {
        const doc = withOther ? { other: 1, mcpServers: servers } : { mcpServers: servers }
        const text = `${JSON.stringify(doc, null, indent)}\n`
        const added = editJsonConfig(text, { remove: false, force: false })
        if (added._tag !== "Changed") return false
        expect(oneInsertion(text, added.text)).toBe(true)
        expect(parseJsonc(added.text)).toEqual({ ...doc, mcpServers: { ...servers, ocpool: OURS } })
        const removed = editJsonConfig(added.text, { remove: true, force: false })
        return removed._tag === "Changed" && parseJsonc(removed.text).mcpServers !== undefined && JSON.stringify(parseJsonc(removed.text)) === JSON.stringify(doc)
      }),
      { numRuns: 150 }
    )
  })
})

const POPULATED_TOML = `# my codex settings
model = "o3"

[profiles.fast]
model = "mini" # inline comment

[mcp_servers.files]
command = "files-server"
args = ["--root", "/tmp"]
env = { "A" = "1" }
`

describe("ocpool init --mcp codex (TOML)", () => {
  it("US-51 codex: a missing config is created; again is present; --remove takes out exactly its lines", async () => {
    const h = home()
    const path = mcpConfigPath("codex", h)
    expect((await run(h, ["--mcp", "codex"])).code).toBe(0)
    expect(read(path)).toBe('[mcp_servers.ocpool]\ncommand = "ocpool"\nargs = ["mcp"]\n')
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect((await run(h, ["--mcp", "codex"])).stdout).toContain("already has")
    expect((await run(h, ["--mcp", "codex", "--remove"])).code).toBe(0)
    expect(read(path)).toBe("")
  })

  it("US-51 codex: a populated config with comments and other tables keeps every byte; add then remove gives it back", async () => {
    const h = home()
    const path = mcpConfigPath("codex", h)
    put(path, POPULATED_TOML, 0o600)
    expect((await run(h, ["--mcp", "codex"])).code).toBe(0)
    const added = read(path)
    expect(added.startsWith(POPULATED_TOML)).toBe(true)
    expect(added.slice(POPULATED_TOML.length)).toBe('\n[mcp_servers.ocpool]\ncommand = "ocpool"\nargs = ["mcp"]\n')
    const doc = parseToml(added) as { mcp_servers: Record<string, unknown>; model: string }
    expect(doc.mcp_servers.ocpool).toEqual(OURS)
    expect(doc.mcp_servers.files).toMatchObject({ command: "files-server" })
    expect((await run(h, ["--mcp", "codex", "--remove"])).code).toBe(0)
    expect(read(path)).toBe(POPULATED_TOML)
  })

  it("US-51 codex: our table in the middle of the file is removed with its own lines only (comments of the next table kept); a different one needs --force", async () => {
    const middle = `a = 1\n\n[mcp_servers.ocpool]\ncommand = "/old/ocpool"\nargs = []\n\n# the next table\n[mcp_servers.other]\ncommand = "x"\r\n`
    const edit = editTomlConfig(middle, { remove: false, force: false })
    expect(edit._tag).toBe("Different")
    const removed = editTomlConfig(middle, { remove: true, force: false })
    expect(removed).toEqual({ _tag: "Changed", replaced: false, text: `a = 1\n\n# the next table\n[mcp_servers.other]\ncommand = "x"\r\n` })
    const forced = editTomlConfig(middle, { remove: false, force: true })
    expect(forced._tag).toBe("Changed")
    if (forced._tag === "Changed") {
      expect(forced.replaced).toBe(true)
      expect((parseToml(forced.text) as { mcp_servers: Record<string, unknown> }).mcp_servers).toEqual({ ocpool: OURS, other: { command: "x" } })
    }
  })

  it("US-51 codex: --remove always undoes its own add, byte for byte: a UTF-8 BOM kept, the user's blank lines kept, a multi-line string holding our header left alone (issue 33)", async () => {
    const h = home()
    const path = mcpConfigPath("codex", h)
    const texts = [
      "\ufeffmodel = \"o3\"\n",
      "a = 1\n\n",
      "a = 1\n\n\n",
      "a = 1",
      'note = """\n[mcp_servers.ocpool]\ncommand = "not a table"\n"""\n',
      "# only a comment\n",
      ""
    ]
    for (const text of texts) {
      put(path, text)
      expect((await run(h, ["--mcp", "codex"])).code, JSON.stringify(text)).toBe(0)
      const added = readFileSync(path)
      expect((parseToml(added.toString("utf8").replace(/^\ufeff/, "")) as { mcp_servers: Record<string, unknown> }).mcp_servers.ocpool).toEqual(OURS)
      if (text.startsWith("\ufeff")) expect([...added.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
      const removed = await run(h, ["--mcp", "codex", "--remove"])
      expect(removed.code, `${JSON.stringify(text)}: ${removed.stderr}`).toBe(0)
      // "a = 1" had no final newline: the add gave it one, which stays
      expect(readFileSync(path, "utf8"), JSON.stringify(text)).toBe(text === "a = 1" ? "a = 1\n" : text)
    }
  })

  it("US-51 codex: a config that is not TOML, or whose mcp_servers cannot take a table, is refused with one line naming the file, nothing written", async () => {
    const h = home()
    const path = mcpConfigPath("codex", h)
    for (const text of ['model = "o3"\nbad =\n', 'mcp_servers = { files = { command = "f" } }\n', 'mcp_servers = 3\n', '[mcp_servers]\nocpool = { command = "x" }\n']) {
      put(path, text)
      const r = await run(h, ["--mcp", "codex", "--force"])
      expect(r.code, text).toBe(2)
      expect(r.stderr.trim().split("\n"), text).toHaveLength(1)
      expect(r.stderr).toContain(path)
      expect(read(path)).toBe(text)
    }
    expect(editTomlConfig('model = "o3"\nbad =\n', { remove: false, force: false })).toMatchObject({ _tag: "Invalid", line: 2, syntax: true })
  })
})

/** The entry when PATH has no ocpool: the Node binary running now and this checkout's bin by its real path. */
const ABSOLUTE = { command: process.execPath, args: [realpathSync(cli), "mcp"] }

/** Another installation of opencode-pool with its bin (a checkout the user moved on from). */
const otherBin = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-old-checkout-"))
  made.push(dir)
  put(join(dir, "package.json"), JSON.stringify({ name: "opencode-pool", version: "0.0.9" }))
  put(join(dir, "bin", "ocpool.js"), "#!/usr/bin/env node\n")
  return join(dir, "bin", "ocpool.js")
}

describe("ocpool init --mcp when PATH has no ocpool (issue 33)", () => {
  it("US-51 claude-code: the entry is this installation's absolute command, which starts (--version), and the report says why and how to put ocpool on PATH; again is present; --remove takes it out", async () => {
    const h = home()
    const path = mcpConfigPath("claude-code", h)
    const empty = home()
    const r = await run(h, ["--mcp", "claude-code"], empty)
    expect(r.code, r.stderr).toBe(0)
    expect(parseJsonc(read(path))).toEqual({ mcpServers: { ocpool: ABSOLUTE } })
    const started = spawnSync(ABSOLUTE.command, [ABSOLUTE.args[0]!, "--version"], { encoding: "utf8", env: { PATH: empty, HOME: h } })
    expect(started.status, started.stderr).toBe(0)
    expect(started.stdout).toMatch(/\d+\.\d+\.\d+/)
    expect(r.stdout).toContain(`add the MCP server "ocpool" (${ABSOLUTE.command} ${ABSOLUTE.args.join(" ")}) to ${path}\n`)
    expect(r.stdout).toContain("ocpool is not on PATH, so the entry runs this installation by its absolute path; to put its ocpool on PATH: cd ")
    expect(r.stdout).toContain(" && npm link")
    expect((await run(h, ["--mcp", "claude-code"], empty)).stdout).toContain("already has the MCP server")
    expect((await run(h, ["--mcp", "claude-code", "--remove"], empty)).code).toBe(0)
    expect(parseJsonc(read(path))).toEqual({ mcpServers: {} })
    // the snippets, too, are what runs from here
    expect((await run(h, ["--mcp", "print"], empty)).stdout).toContain(`"command": ${JSON.stringify(ABSOLUTE.command)}, "args": [${ABSOLUTE.args.map((a) => JSON.stringify(a)).join(", ")}]`)
  })

  it("US-51 an entry of ours that runs ocpool from a PATH without it, or another installation, is replaced without --force (its other keys kept, --dry-run first); --remove takes out either form", async () => {
    const h = home()
    const path = mcpConfigPath("cursor", h)
    const text = `{\n  "mcpServers": {\n    "ocpool": { "command": "ocpool", "args": ["mcp"], "env": { "A": "1" } } // mine\n  }\n}\n`
    put(path, text)
    const dry = await run(h, ["--mcp", "cursor", "--dry-run"], home())
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toContain(`would replace the MCP server "ocpool" in ${path}: ocpool mcp → ${ABSOLUTE.command} ${ABSOLUTE.args.join(" ")}\n`)
    expect(read(path)).toBe(text)
    const r = await run(h, ["--mcp", "cursor"], home())
    expect(r.code, r.stderr).toBe(0)
    expect(parseJsonc(read(path))).toEqual({ mcpServers: { ocpool: { ...ABSOLUTE, env: { A: "1" } } } })
    expect(read(path)).toContain("// mine\n")
    // another installation's absolute command: replaced by `ocpool mcp` once PATH finds this one
    const old = otherBin()
    put(path, `{ "mcpServers": { "ocpool": { "command": "/usr/bin/node", "args": [${JSON.stringify(old)}, "mcp"] } } }\n`)
    const back = await run(h, ["--mcp", "cursor"])
    expect(back.code, back.stderr).toBe(0)
    expect(back.stdout).toContain(`replace the MCP server "ocpool" in ${path}: /usr/bin/node ${old} mcp → ocpool mcp\n`)
    expect(read(path)).toBe(`{ "mcpServers": { "ocpool": { "command": "ocpool", "args": ["mcp"] } } }\n`)
    put(path, `{ "mcpServers": { "ocpool": { "command": "/usr/bin/node", "args": [${JSON.stringify(old)}, "mcp"] }, "x": {} } }\n`)
    expect((await run(h, ["--mcp", "cursor", "--remove"])).code).toBe(0)
    expect(parseJsonc(read(path))).toEqual({ mcpServers: { x: {} } })
  })

  it("US-51 codex: our table running another installation gets its command and args replaced in place, the rest of the table and file kept", async () => {
    const h = home()
    const path = mcpConfigPath("codex", h)
    const old = otherBin()
    const text = `${POPULATED_TOML}\n[mcp_servers.ocpool]\ncommand = ${JSON.stringify(old)} # the old clone\nargs = ["mcp"]\nstartup_timeout_sec = 20\n\n[profiles.slow]\nmodel = "big"\n`
    put(path, text)
    const r = await run(h, ["--mcp", "codex"], home())
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`replace the MCP server "ocpool" in ${path}: ${old} mcp → ${ABSOLUTE.command} ${ABSOLUTE.args.join(" ")}\n`)
    expect(read(path)).toBe(
      text.replace(`command = ${JSON.stringify(old)} #`, `command = ${JSON.stringify(ABSOLUTE.command)} #`).replace('args = ["mcp"]\nstartup', `args = [${ABSOLUTE.args.map((a) => JSON.stringify(a)).join(", ")}]\nstartup`)
    )
    expect((parseToml(read(path)) as { mcp_servers: Record<string, unknown> }).mcp_servers.ocpool).toEqual({ ...ABSOLUTE, startup_timeout_sec: 20 })
    expect((await run(h, ["--mcp", "codex"], home())).stdout).toContain("already has")
  })
})

describe("ocpool init --mcp print and flags", () => {
  it("US-51 print shows the three snippets and writes nothing", async () => {
    const h = home()
    const r = await run(h, ["--mcp", "print"])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('"mcpServers": { "ocpool": { "command": "ocpool", "args": ["mcp"] } }')
    expect(r.stdout).toContain("[mcp_servers.ocpool]")
    expect(r.stdout).toContain("~/.cursor/mcp.json")
    // the command it suggests runs as pasted: no `a|b|c` a shell would read as pipes
    expect(r.stdout).toMatch(/or let ocpool add it: .*init --mcp claude-code \(or codex, or cursor\)$/m)
    expect(r.stdout).not.toContain("claude-code|")
    expect(existsSync(join(h, ".claude.json"))).toBe(false)
  })

  it("US-51 --mcp with --global is a usage error naming the flag; an unknown harness is a usage error", async () => {
    const h = home()
    const both = await run(h, ["--mcp", "cursor", "--global"])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("--mcp")
    expect((await run(h, ["--mcp", "vim"])).code).toBe(2)
  })
})
