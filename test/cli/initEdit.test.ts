/**
 * `ocpool init --global | --project` on the configs people really have (issue 18, items 2, 4, 5; US-15):
 * minified and huge files, bytes that are not UTF-8, a BOM, mixed line endings, symbolic links,
 * read-only files, duplicate `plugin` keys, absurd nesting, other packages' entries that look like
 * ours, and signals while it works. The built CLI in a child process, with a temporary HOME.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { parse } from "jsonc-parser"
import { cli, ensureBuilt, root } from "./builtCli.js"

ensureBuilt("init --help")

const ENTRY = pathToFileURL(join(root, "dist", "opencode-plugin.js")).href

const made: Array<string> = []
afterAll(() => {
  for (const d of made) {
    try {
      chmodSync(d, 0o700)
    } catch {
      // gone
    }
    rmSync(d, { recursive: true, force: true })
  }
})

const tmp = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix))
  made.push(d)
  return d
}

/** A temporary HOME and project directory; `run` is `ocpool init …` there. */
const sandbox = () => {
  const home = tmp("ocpool-initedit-home-")
  const project = tmp("ocpool-initedit-proj-")
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }
  const run = (args: ReadonlyArray<string>) => spawnSync(process.execPath, [cli, "init", ...args], { cwd: project, encoding: "utf8", env, timeout: 60_000 })
  const doctor = () => {
    const r = spawnSync(process.execPath, [cli, "doctor", "--json"], { cwd: project, encoding: "utf8", env, timeout: 60_000 })
    return (JSON.parse(r.stdout) as { checks: Array<{ id: string; status: string; detail: string }> }).checks.find((c) => c.id === "plugin")!
  }
  const dir = join(home, ".config", "opencode")
  mkdirSync(dir, { recursive: true })
  // a pool file already there: these tests are about the config
  mkdirSync(join(home, ".config", "opencode-pool"), { recursive: true })
  writeFileSync(join(home, ".config", "opencode-pool", "pool.txt"), "a/b 1\n")
  return { home, project, env, run, doctor, config: join(dir, "opencode.json") }
}

/** Whether `before` is `after` with some bytes taken out (only insertions were made). */
const onlyInserted = (before: Buffer, after: Buffer): boolean => {
  let i = 0
  for (let j = 0; j < after.length && i < before.length; j++) if (after[j] === before[i]) i++
  return i === before.length
}

/** Another package that ships a `dist/opencode-plugin.js` of its own. */
const otherPackage = (name: string): string => {
  const dir = tmp("ocpool-other-pkg-")
  mkdirSync(join(dir, "dist"))
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0" }))
  writeFileSync(join(dir, "dist", "opencode-plugin.js"), "export default {}\n")
  return pathToFileURL(join(dir, "dist", "opencode-plugin.js")).href
}

/** Another installation of opencode-pool (a checkout the user moved on from): its package.json and plugin bundle. */
const otherInstallation = (): string => {
  const dir = tmp("ocpool-old-checkout-")
  mkdirSync(join(dir, "dist"))
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "opencode-pool", version: "0.0.9" }))
  writeFileSync(join(dir, "dist", "opencode-plugin.js"), "export default {}\n")
  return pathToFileURL(join(dir, "dist", "opencode-plugin.js")).href
}

describe("ocpool init: an entry of another installation is replaced (issue 33)", () => {
  it("US-15 an entry pointing at another checkout is replaced by this installation's, saying so; its options, the other plugins and every other byte kept; a second run changes nothing", () => {
    const s = sandbox()
    const old = otherInstallation()
    const text = `{\n  // mine\n  "plugin": [\n    "some-other-plugin",\n    [${JSON.stringify(old)}, { "maxSlots": 2 }], // the old clone\n  ],\n}\n`
    writeFileSync(s.config, text)
    const r = s.run(["--global"])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain(`replace opencode-pool entry ${old} → ${ENTRY} in ${s.config}\n`)
    expect(r.stdout).not.toContain("already lists")
    expect(readFileSync(s.config, "utf8")).toBe(text.replace(JSON.stringify(old), JSON.stringify(ENTRY)))
    const again = s.run(["--global"])
    expect(again.stdout).toContain("already lists opencode-pool; unchanged")
    expect(readFileSync(s.config, "utf8")).toBe(text.replace(JSON.stringify(old), JSON.stringify(ENTRY)))
  })

  it("US-15 --dry-run shows the replacement and its diff and writes nothing; --json names the replaced entry; a second old entry is taken out", () => {
    const s = sandbox()
    const old = otherInstallation()
    const older = otherInstallation()
    const text = `{ "plugin": [${JSON.stringify(old)}, "x", ${JSON.stringify(older)}] }\n`
    writeFileSync(s.config, text)
    const dry = s.run(["--global", "--dry-run"])
    expect(dry.status, dry.stderr).toBe(0)
    expect(dry.stdout).toContain(`would replace opencode-pool entry ${old} → ${ENTRY} in ${s.config}\n`)
    expect(dry.stdout).toContain(`would remove opencode-pool entry ${older} (another installation) from ${s.config}\n`)
    expect(dry.stdout).toContain(`+{ "plugin": [${JSON.stringify(ENTRY)}, "x"] }`)
    expect(dry.stdout).toContain("dry run: nothing was written")
    expect(readFileSync(s.config, "utf8")).toBe(text)
    const json = s.run(["--global", "--json"])
    expect(json.status, json.stderr).toBe(0)
    expect((JSON.parse(json.stdout) as { config: unknown }).config).toMatchObject({ path: s.config, entry: ENTRY, changed: true, created: false, replaced: old, dropped: [older] })
    expect(readFileSync(s.config, "utf8")).toBe(`{ "plugin": [${JSON.stringify(ENTRY)}, "x"] }\n`)
  })

  it("US-15 this installation's entry already there: an old checkout's entry beside it is taken out; the package name is never replaced", () => {
    const s = sandbox()
    const old = otherInstallation()
    writeFileSync(s.config, `{ "plugin": [${JSON.stringify(ENTRY)}, ${JSON.stringify(old)}] }\n`)
    const r = s.run(["--global"])
    expect(r.stdout).toContain(`remove opencode-pool entry ${old} (another installation) from ${s.config}\n`)
    expect(readFileSync(s.config, "utf8")).toBe(`{ "plugin": [${JSON.stringify(ENTRY)}] }\n`)
    const named = `{ "plugin": ["opencode-pool@0.1.0"] }\n`
    writeFileSync(s.config, named)
    expect(s.run(["--global"]).stdout).toContain("already lists opencode-pool; unchanged")
    expect(readFileSync(s.config, "utf8")).toBe(named)
  })
})

describe("ocpool init: which entries are ours (issue 18 item 5)", () => {
  it("US-15 another package's dist/opencode-plugin.js, @someone/opencode-pool and a path with an opencode-pool segment are not ours: init adds ours beside them, --remove takes out only ours, doctor agrees", () => {
    const s = sandbox()
    const other = otherPackage("someone-elses-plugin")
    const foreign = [other, "@someone/opencode-pool", "file:///opt/opencode-pool/lib/other.js", "/srv/opencode-pool/dist/opencode-plugin.js", "opencode-pool-extras"]
    const text = `{\n  "plugin": [\n${foreign.map((e) => `    ${JSON.stringify(e)}`).join(",\n")}\n  ]\n}\n`
    writeFileSync(s.config, text)
    expect(s.doctor().status).not.toBe("ok")
    const added = s.run(["--global"])
    expect(added.status, added.stderr).toBe(0)
    expect(added.stdout).toContain(`edit ${s.config}: plugin entry ${ENTRY}`)
    expect((parse(readFileSync(s.config, "utf8")) as { plugin: Array<string> }).plugin).toEqual([...foreign, ENTRY])
    // doctor now finds this installation's entry; it does not send the user back to init
    const check = s.doctor()
    expect(check.detail).toContain(`listed in ${s.config} (${ENTRY})`)
    expect(check.detail).not.toContain("init --global")
    const again = s.run(["--global"])
    expect(again.stdout).toContain("already lists opencode-pool; unchanged")
    const removed = s.run(["--global", "--remove"])
    expect(removed.status, removed.stderr).toBe(0)
    expect(readFileSync(s.config, "utf8")).toBe(text)
    const none = s.run(["--global", "--remove"])
    expect(none.stdout).toContain("does not list opencode-pool; nothing to remove")
  })

  it("US-15 a file:// entry that reaches this installation's bundle through a symbolic link is ours, and is never added twice", () => {
    const s = sandbox()
    const links = tmp("ocpool-link-")
    symlinkSync(join(root, "dist", "opencode-plugin.js"), join(links, "plugin.js"))
    const text = `{ "plugin": [${JSON.stringify(pathToFileURL(join(links, "plugin.js")).href)}] }\n`
    writeFileSync(s.config, text)
    const r = s.run(["--global"])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain("already lists opencode-pool; unchanged")
    expect(readFileSync(s.config, "utf8")).toBe(text)
  })

  it("US-15 two top-level plugin keys: exit 2 with the second one's file:line:column, nothing written", () => {
    const s = sandbox()
    const text = '{\n  "plugin": ["a"],\n  "theme": "x",\n    "plugin": ["b"]\n}\n'
    writeFileSync(s.config, text)
    for (const args of [["--global"], ["--global", "--remove"], ["--global", "--dry-run"]]) {
      const r = s.run(args)
      expect(r.status, args.join(" ")).toBe(2)
      expect(r.stderr).toBe(`ocpool: ${s.config}:4:5: a second "plugin" key (the first is at line 2); opencode reads only the last one: merge them by hand; nothing changed\n`)
      expect(readFileSync(s.config, "utf8")).toBe(text)
    }
  })

  it("US-15 a config nested 100,000 levels deep: exit 2 with the position where it goes too deep, no stack overflow", () => {
    const s = sandbox()
    const text = `{"a": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`
    writeFileSync(s.config, text)
    const r = s.run(["--global"])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`ocpool: ${s.config}:1:262: nested deeper than 256 levels; nothing changed\n`)
    expect(readFileSync(s.config, "utf8")).toBe(text)
  })
})

describe("ocpool init keeps every byte it does not edit (issue 18 item 4)", () => {
  it("US-15 Latin-1 bytes, a BOM, mixed LF and CRLF and no final line break are kept exactly; --remove gives back the original bytes", () => {
    const s = sandbox()
    const before = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('{\r\n  // caf', "latin1"),
      Buffer.from([0xe9]),
      Buffer.from(' settings\n  "theme": "t', "latin1"),
      Buffer.from([0xe9, 0xff]),
      Buffer.from('",\r\n  "plugin": [\n    "x"\r\n  ]\n}', "latin1")
    ])
    writeFileSync(s.config, before)
    const r = s.run(["--global"])
    expect(r.status, r.stderr).toBe(0)
    const after = readFileSync(s.config)
    expect(onlyInserted(before, after)).toBe(true)
    expect(after.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(true)
    // the new line takes the ending of the line it follows (CRLF after "x"); the others keep theirs
    expect(after.toString("latin1")).toContain(`"x",\r\n    ${JSON.stringify(ENTRY)}\r\n  ]\n}`)
    const removed = s.run(["--global", "--remove"])
    expect(removed.status, removed.stderr).toBe(0)
    expect(readFileSync(s.config).equals(before)).toBe(true)
  })

  it("US-15 a symbolic link to the config is edited at its target; the link stays a link", () => {
    const s = sandbox()
    const dotfiles = tmp("ocpool-dotfiles-")
    const target = join(dotfiles, "opencode.json")
    writeFileSync(target, '{\n  "theme": "x"\n}\n')
    symlinkSync(target, s.config)
    const r = s.run(["--global"])
    expect(r.status, r.stderr).toBe(0)
    expect(lstatSync(s.config).isSymbolicLink()).toBe(true)
    expect(parse(readFileSync(target, "utf8"))).toEqual({ theme: "x", plugin: [ENTRY] })
  })

  it("US-15 a read-only config is refused: exit 1, one line, the file unchanged", () => {
    const s = sandbox()
    const text = '{ "theme": "x" }\n'
    writeFileSync(s.config, text)
    chmodSync(s.config, 0o444)
    const r = s.run(["--global"])
    expect(r.status).toBe(1)
    expect(r.stderr).toBe(`ocpool: ${s.config}: read-only (mode 444); not changed\n`)
    expect(readFileSync(s.config, "utf8")).toBe(text)
    expect((lstatSync(s.config).mode & 0o777).toString(8)).toBe("444")
  })

  it("US-15 a config over 1 MiB, or one the entry would push past 1 MiB, is refused with one line and left as it was", () => {
    const s = sandbox()
    const big = `{"pad": "${"x".repeat((1 << 20) - 20)}"}`
    expect(big.length).toBeLessThanOrEqual(1 << 20)
    writeFileSync(s.config, big)
    const near = s.run(["--global"])
    expect(near.status).toBe(1)
    expect(near.stderr).toBe(`ocpool: ${s.config}: would grow past 1 MiB; not changed\n`)
    writeFileSync(s.config, `${big}      `.repeat(2))
    const over = s.run(["--global"])
    expect(over.status).toBe(1)
    expect(over.stderr).toBe(`ocpool: ${s.config}: larger than 1 MiB; not changed\n`)
  })
})

/** A one-line config of about `bytes` bytes: many keys, as a minifier writes it. */
const minified = (bytes: number): string => {
  const keys: Array<string> = []
  let size = 2
  for (let i = 0; size < bytes - 40; i++) {
    const kv = `"key${i}":"value${i}"`
    keys.push(kv)
    size += kv.length + 1
  }
  return `{${keys.join(",")}}`
}

describe("ocpool init on a minified config (issue 18 item 2)", () => {
  it("US-15 a 1 MiB one-line config gets the entry appended to its one line, every other byte kept, and loses it again with --remove", () => {
    const s = sandbox()
    const text = minified(1_000_000)
    writeFileSync(s.config, text)
    const r = s.run(["--global"])
    expect(r.status, r.stderr).toBe(0)
    const after = readFileSync(s.config, "utf8")
    expect(after).toBe(`${text.slice(0, -1)},"plugin":[${JSON.stringify(ENTRY)}]}`)
    const back = s.run(["--global", "--remove"])
    expect(back.status, back.stderr).toBe(0)
    expect(readFileSync(s.config, "utf8")).toBe(text)
    const arrays = `{"plugin":[${Array.from({ length: 40_000 }, (_, i) => `"p${i}"`).join(",")}]}`
    writeFileSync(s.config, arrays)
    expect(s.run(["--global"]).status).toBe(0)
    expect(readFileSync(s.config, "utf8")).toBe(`${arrays.slice(0, -2)},${JSON.stringify(ENTRY)}]}`)
  })

  it.each([["SIGTERM"], ["SIGINT"]] as const)(
    "US-15 %s ends init at once whenever it lands: the config is the old bytes or the new, never anything else, and no temporary file is left",
    async (signal) => {
      const s = sandbox()
      const text = minified(600_000)
      const edited = `${text.slice(0, -1)},"plugin":[${JSON.stringify(ENTRY)}]}`
      for (const delay of [50, 150, 300, 500, 800]) {
        writeFileSync(s.config, text)
        const child = spawn(process.execPath, [cli, "init", "--global"], { cwd: s.project, env: s.env, stdio: "ignore" })
        const ended = new Promise<number>((done) => child.on("exit", () => done(performance.now())))
        await new Promise((r) => setTimeout(r, delay))
        const sent = performance.now()
        child.kill(signal)
        const at = await Promise.race([ended, new Promise<number>((r) => setTimeout(() => r(Number.POSITIVE_INFINITY), 10_000))])
        if (at === Number.POSITIVE_INFINITY) child.kill("SIGKILL")
        // "at once": the whole edit of this file takes well under a second; minutes before the fix
        expect(at - sent, `${signal} after ${delay} ms`).toBeLessThan(5_000)
        const now = readFileSync(s.config, "utf8")
        expect(now === text || now === edited, `${signal} after ${delay} ms`).toBe(true)
        expect(readdirSync(join(s.home, ".config", "opencode")).filter((f) => f !== "opencode.json")).toEqual([])
      }
    },
    120_000
  )
})

describe("ocpool init leaves no trace on a refusal", () => {
  it("US-15 a refused edit creates no directory, no pool file and no temporary file", () => {
    const s = sandbox()
    rmSync(join(s.home, ".config", "opencode-pool"), { recursive: true })
    writeFileSync(s.config, '{ "plugin": 1 }')
    const r = s.run(["--global"])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`ocpool: ${s.config}:1:13: "plugin" is not an array; nothing changed\n`)
    expect(existsSync(join(s.home, ".config", "opencode-pool"))).toBe(false)
    expect(readdirSync(join(s.home, ".config", "opencode"))).toEqual(["opencode.json"])
  })
})
