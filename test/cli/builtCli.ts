/**
 * What the CLI tests that run the built `ocpool` as a child process share: the built entry (built when
 * `dist/help.json` lacks the command the test needs) and stub programs that record their argv.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const root = new URL("../../", import.meta.url).pathname
export const cli = join(root, "bin/ocpool.js")

/** Builds dist/ unless its help already has `helpKey` (e.g. `notify --help`). */
export const ensureBuilt = (helpKey: string): void => {
  const helpFile = join(root, "dist/help.json")
  if (!existsSync(helpFile) || !Object.hasOwn(JSON.parse(readFileSync(helpFile, "utf8")) as object, helpKey)) {
    execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })
  }
}

/** A program that appends its argv to `<name>.log`, writes `stderr`, exits `code`. */
export const stub = (dir: string, name: string, code = 0, stderr = "") =>
  writeFileSync(
    join(dir, name),
    `#!${process.execPath}
require("fs").appendFileSync(${JSON.stringify(join(dir, `${name}.log`))}, JSON.stringify(process.argv.slice(2)) + "\\n")
process.stderr.write(${JSON.stringify(stderr)})
process.exit(${code})
`,
    { mode: 0o755 }
  )

/** The argv of every call of the stub `name` in `dir`. */
export const calls = (dir: string, name: string): Array<Array<string>> => {
  const log = join(dir, `${name}.log`)
  return existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Array<string>) : []
}

/**
 * A temporary directory holding only `ocpool`, a symbolic link to this checkout's bin (what `npm link`
 * makes): on PATH, ocpool's hints say `ocpool` and `init --mcp` writes `"command": "ocpool"`.
 */
export const linkedOcpoolDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-linked-"))
  symlinkSync(cli, join(dir, "ocpool"))
  return dir
}
