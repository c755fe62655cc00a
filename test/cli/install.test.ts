/**
 * `ocpool init --global | --project [--dry-run] [--remove]` (issue: adoption without surprises; US-15):
 * the built CLI in a child process with a temporary HOME and working directory, never the real ones.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { parse } from "jsonc-parser"
import { addPluginEntry, removePluginEntry } from "../../src/core/opencodeConfig.js"
import { cli, ensureBuilt, linkedOcpoolDir, root } from "./builtCli.js"

ensureBuilt("init --help")

const ENTRY = pathToFileURL(join(root, "dist", "opencode-plugin.js")).href

const made: Array<string> = []
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

/** A PATH on which `ocpool` is this checkout (as after `npm link`), then the usual directories. */
const linkedPath = (): string => {
  const dir = linkedOcpoolDir()
  made.push(dir)
  return `${dir}:${process.env.PATH ?? "/usr/bin:/bin"}`
}

/** A temporary HOME and project directory (removed after the file's tests); `ocpool` on PATH is this checkout unless `path` says otherwise. */
const sandbox = (path: string = linkedPath()) => {
  const home = mkdtempSync(join(tmpdir(), "ocpool-install-home-"))
  const project = mkdtempSync(join(tmpdir(), "ocpool-install-proj-"))
  made.push(home, project)
  const run = (args: ReadonlyArray<string>, cwd: string = project) => spawnSync(process.execPath, [cli, "init", ...args], { cwd, encoding: "utf8", env: { PATH: path, HOME: home } })
  return { home, project, path, run, global: join(home, ".config", "opencode", "opencode.json"), pool: join(home, ".config", "opencode-pool", "pool.txt") }
}

/** A directory holding only `node` (a link to the one running the tests): a PATH without ocpool. */
const nodeOnlyPath = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-node-only-"))
  made.push(dir)
  symlinkSync(process.execPath, join(dir, "node"))
  return dir
}

const JSONC = `{
\t// my opencode settings
\t"theme": "tokyonight", // the dark one
\t"plugin": [
\t\t"some-other-plugin",
\t],
\t"agent": { "build": { "model": "x/y" } },
}
`

describe("ocpool init --global | --project", () => {
  it("US-15 plain init writes only the pool file and names, for a hand edit, the entry that loads this installation", () => {
    const s = sandbox()
    const r = s.run([])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toBe(`wrote ${s.pool}\nadd opencode-pool to your opencode config with: ocpool init --global (or by hand: "plugin": ["${ENTRY}"])\n`)
    expect(existsSync(s.global)).toBe(false)
  })

  it("US-15 every hint names the ocpool that runs from here: this installation's bin by its absolute path when PATH has no ocpool (and it runs), npx ocpool inside the checkout (issue 33)", () => {
    const bin = realpathSync(cli)
    const s = sandbox(nodeOnlyPath())
    const plain = s.run([])
    expect(plain.status, plain.stderr).toBe(0)
    expect(plain.stdout).toBe(`wrote ${s.pool}\nadd opencode-pool to your opencode config with: ${bin} init --global (or by hand: "plugin": ["${ENTRY}"])\n`)
    // the hint is a command line that works here: the shell finds it and it runs
    const version = spawnSync("/bin/sh", ["-c", `${bin} --version`], { cwd: s.project, encoding: "utf8", env: { PATH: s.path, HOME: s.home } })
    expect(version.status, version.stderr).toBe(0)
    expect(version.stdout).toMatch(/\d+\.\d+\.\d+/)
    const global = s.run(["--global"])
    expect(global.status, global.stderr).toBe(0)
    expect(global.stdout).toContain(`now loads opencode-pool; check with: ${bin} doctor\n`)
    const doctor = spawnSync(process.execPath, [cli, "doctor", "--json"], { cwd: s.project, encoding: "utf8", env: { PATH: s.path, HOME: join(s.home, "elsewhere") } })
    expect((JSON.parse(doctor.stdout) as { checks: Array<{ id: string; detail: string }> }).checks.find((c) => c.id === "plugin")?.detail).toContain(`(run ${bin} init --global)`)
    // without node on PATH the bin's #!/usr/bin/env node cannot start: the Node binary goes first
    const bare = sandbox(mkdtempSync(join(tmpdir(), "ocpool-empty-path-")))
    made.push(bare.path)
    expect(bare.run([]).stdout).toContain(`with: ${process.execPath} ${bin} init --global (`)
    // inside the checkout npx finds it
    const inside = sandbox(nodeOnlyPath())
    expect(inside.run([], root).stdout).toContain("with: npx ocpool init --global (")
  })

  it("US-15 --global in an empty HOME creates opencode.json with this installation's entry and the pool file; a second run changes no byte", () => {
    const s = sandbox()
    const first = s.run(["--global"])
    expect(first.status, first.stderr).toBe(0)
    expect(parse(readFileSync(s.global, "utf8"))).toEqual({ $schema: "https://opencode.ai/config.json", plugin: [ENTRY] })
    expect(readFileSync(s.pool, "utf8")).toContain("# opencode-pool: the models that run pooled subagents")
    expect(first.stdout).toContain(`create ${s.global}: plugin entry ${ENTRY}`)
    const config = readFileSync(s.global)
    const pool = readFileSync(s.pool)
    const mtime = statSync(s.global).mtimeMs
    const second = s.run(["--global"])
    expect(second.status).toBe(0)
    expect(second.stdout).toContain("already lists opencode-pool; unchanged")
    expect(second.stdout).toContain(`pool file ${s.pool} kept`)
    expect(readFileSync(s.global).equals(config)).toBe(true)
    expect(readFileSync(s.pool).equals(pool)).toBe(true)
    expect(statSync(s.global).mtimeMs).toBe(mtime)
  })

  it("US-15 --project edits the project's opencode.jsonc in place: comments, trailing commas, tabs and key order kept, the entry appended once", () => {
    const s = sandbox()
    const path = join(s.project, "opencode.jsonc")
    writeFileSync(path, JSONC)
    const r = s.run(["--project", "--json"])
    expect(r.status, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout) as { config: { path: string; changed: boolean; created: boolean; entry: string } }
    expect(out.config).toMatchObject({ path, changed: true, created: false, entry: ENTRY })
    const after = readFileSync(path, "utf8")
    expect(after).toContain("\t// my opencode settings\n")
    expect(after).toContain('"theme": "tokyonight", // the dark one')
    expect(after.indexOf('"theme"')).toBeLessThan(after.indexOf('"plugin"'))
    expect(after.indexOf('"plugin"')).toBeLessThan(after.indexOf('"agent"'))
    expect((parse(after) as { plugin: Array<string> }).plugin).toEqual(["some-other-plugin", ENTRY])
    expect(existsSync(join(s.project, "opencode.json"))).toBe(false)
    expect(s.run(["--project"]).status).toBe(0)
    expect(readFileSync(path, "utf8")).toBe(after)
  })

  it.each([["opencode-pool"], ["opencode-pool@0.1.0"], ["opencode-pool@latest"], [ENTRY]])(
    "US-15 an existing entry spelled %j is recognised and never duplicated",
    (entry) => {
      const s = sandbox()
      mkdirSync(join(s.home, ".config", "opencode"), { recursive: true })
      const text = `{ "plugin": [${JSON.stringify(entry)}] }\n`
      writeFileSync(s.global, text)
      expect(s.run(["--global"]).status).toBe(0)
      expect(readFileSync(s.global, "utf8")).toBe(text)
      const pair = `{ "plugin": [[${JSON.stringify(entry)}, { "maxSlots": 2 }]] }\n`
      writeFileSync(s.global, pair)
      expect(s.run(["--global"]).status).toBe(0)
      expect(readFileSync(s.global, "utf8")).toBe(pair)
    }
  )

  it("US-15 --dry-run prints the unified diff and writes nothing", () => {
    const s = sandbox()
    const path = join(s.project, "opencode.jsonc")
    writeFileSync(path, JSONC)
    const r = s.run(["--project", "--dry-run"])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain(`--- ${path}`)
    expect(r.stdout).toContain(`+++ ${path}`)
    expect(r.stdout).toContain(`+\t\t"${ENTRY}"`)
    expect(r.stdout).toContain("dry run: nothing was written")
    expect(readFileSync(path, "utf8")).toBe(JSONC)
    expect(existsSync(s.pool)).toBe(false)
  })

  it("US-15 a config that is not valid JSONC is refused with its file, line and column, exit 2, the file untouched", () => {
    const s = sandbox()
    const path = join(s.project, "opencode.json")
    const bad = '{\n  "theme": "x",\n  "plugin": [\n}\n'
    writeFileSync(path, bad)
    const r = s.run(["--project"])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(new RegExp(`^ocpool: ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:4:1: \\w+; not valid JSONC, nothing changed\\n$`))
    expect(readFileSync(path, "utf8")).toBe(bad)
    expect(existsSync(s.pool)).toBe(false)
  })

  it("US-15 --remove takes the entry out (other plugins stay), and a second --remove changes nothing; the pool file is kept", () => {
    const s = sandbox()
    const path = join(s.project, "opencode.jsonc")
    writeFileSync(path, JSONC)
    expect(s.run(["--project"]).status).toBe(0)
    const r = s.run(["--project", "--remove"])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain(`remove opencode-pool from ${path}`)
    const after = readFileSync(path, "utf8")
    expect((parse(after) as { plugin: Array<string> }).plugin).toEqual(["some-other-plugin"])
    expect(after).toContain("// my opencode settings")
    expect(existsSync(s.pool)).toBe(true)
    const again = s.run(["--project", "--remove"])
    expect(again.status).toBe(0)
    expect(again.stdout).toContain("does not list opencode-pool; nothing to remove")
    expect(readFileSync(path, "utf8")).toBe(after)
  })

  it("US-15 flags that do not go together are usage errors (exit 2) and write nothing", () => {
    const s = sandbox()
    for (const args of [["--global", "--project"], ["--remove"], ["--dry-run"]]) {
      const r = s.run(args)
      expect(r.status, args.join(" ")).toBe(2)
      expect(r.stderr).toMatch(/^ocpool: /)
    }
    expect(existsSync(join(s.home, ".config"))).toBe(false)
  })
})

describe("the plugin entry in opencode's config (core/opencodeConfig.ts)", () => {
  it("US-15 adding then removing gives back the same settings; an empty file gets a new config", () => {
    const ours = (name: string) => name === "file:///i/dist/opencode-plugin.js"
    for (const text of ["{}", '{ "a": 1, }', JSONC, '{\r\n  "plugin": ["x"]\r\n}\r\n']) {
      const added = addPluginEntry(text, "file:///i/dist/opencode-plugin.js", ours)
      expect(added._tag).toBe("Changed")
      if (added._tag !== "Changed") continue
      expect(addPluginEntry(added.text, "file:///i/dist/opencode-plugin.js", ours)._tag).toBe("Unchanged")
      const removed = removePluginEntry(added.text, ours)
      expect(removed._tag).toBe("Changed")
      if (removed._tag === "Changed") expect(parse(removed.text)).toEqual(parse(text))
    }
    const fresh = addPluginEntry("", "opencode-pool")
    expect(fresh._tag === "Changed" && parse(fresh.text)).toEqual({ $schema: "https://opencode.ai/config.json", plugin: ["opencode-pool"] })
    expect(addPluginEntry('{ "plugin": "x" }', "e")).toMatchObject({ _tag: "Invalid", line: 1, reason: '"plugin" is not an array' })
    expect(addPluginEntry("[1]", "e")).toMatchObject({ _tag: "Invalid", reason: "the top level is not an object" })
  })
})

describe("ocpool doctor confirms the install", () => {
  const doctorPlugin = (s: ReturnType<typeof sandbox>, env: Record<string, string> = {}) => {
    const r = spawnSync(process.execPath, [cli, "doctor", "--json"], { cwd: s.project, encoding: "utf8", env: { PATH: s.path, HOME: s.home, ...env } })
    return (JSON.parse(r.stdout) as { checks: Array<{ id: string; status: string; detail: string }> }).checks.find((c) => c.id === "plugin")!
  }

  it("US-15 after init --global the plugin check is ok, naming the file opencode reads and the entry; with no config it warns", () => {
    const s = sandbox()
    expect(doctorPlugin(s)).toMatchObject({ status: "warn", detail: "no opencode config lists opencode-pool (run ocpool init --global); opencode reads no config file here" })
    expect(s.run(["--global"]).status).toBe(0)
    expect(doctorPlugin(s)).toEqual({ id: "plugin", status: "ok", detail: `listed in ${s.global} (${ENTRY}); opencode reads ${s.global}` })
  })

  it("US-15 an entry whose file is gone (a moved checkout) fails the check; OPENCODE_CONFIG is read too", () => {
    const s = sandbox()
    const moved = join(s.project, "elsewhere.json")
    writeFileSync(moved, JSON.stringify({ plugin: ["file:///nowhere/opencode-pool/dist/opencode-plugin.js"] }))
    const check = doctorPlugin(s, { OPENCODE_CONFIG: moved })
    expect(check.status).toBe("fail")
    expect(check.detail).toBe(
      `opencode reads ${moved}; the plugin entry does not load: file:///nowhere/opencode-pool/dist/opencode-plugin.js in ${moved}: no such file (delete that entry by hand); run ocpool init --global again`
    )
  })
})
