/**
 * No output path ever shows a fleet URL's password, whatever the URL's shape (issue 33 item 5): the
 * built CLI's views, checks and errors with OCPOOL_STATE_URL (or --url) of every shape, a server that
 * refuses the connection, stdout and stderr alike.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseStateBackend } from "../../src/core/state/fleet.js"
import { pgFileProblem } from "../../src/layers/state/pgFiles.js"
import { cli, ensureBuilt } from "./builtCli.js"

ensureBuilt("fleet --help")

const PASSWORD = "S3cretPw9"
/** Shapes a user pastes: the proper one, no `//`, no scheme, an `@` in the password, the query's password. */
const SHAPES = [
  `postgres://pool:${PASSWORD}@127.0.0.1:1/ocpool`,
  `postgres:pool:${PASSWORD}@127.0.0.1:1/ocpool`,
  `pool:${PASSWORD}@127.0.0.1:1/ocpool`,
  `postgres://pool:${PASSWORD}@x@127.0.0.1:1/ocpool`,
  `postgres://127.0.0.1:1/ocpool?user=pool&password=${PASSWORD}`,
  `postgres://pool:${encodeURIComponent(PASSWORD + "/%")}@127.0.0.1:1/ocpool`
]

const run = (args: ReadonlyArray<string>, url: string) => {
  const home = mkdtempSync(join(tmpdir(), "ocpool-secrets-"))
  const r = spawnSync(process.execPath, [cli, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: join(home, ".state"), OCPOOL_STATE_DIR: join(home, "state"), OCPOOL_STATE_URL: url, NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 30_000
  })
  return `${r.stdout}${r.stderr}`
}

describe("a fleet URL's password is never shown (issue 33)", () => {
  it("US-52 the plugin's warning for a URL it cannot use names it masked, for every shape", () => {
    for (const url of SHAPES) {
      const { warnings } = parseStateBackend({ backend: "postgres", url }, {})
      const env = parseStateBackend(undefined, { OCPOOL_STATE_URL: url })
      expect([...warnings, ...env.warnings].join("\n")).not.toContain(PASSWORD)
    }
  })

  it("US-52 status, status --json, permits, cool, doctor and fleet init never print it, whatever the URL's shape", { timeout: 240_000 }, () => {
    for (const url of SHAPES) {
      for (const args of [["status"], ["status", "--json"], ["permits"], ["cool"], ["doctor"], ["fleet", "init", "--url", url]]) {
        const out = run(args, url)
        expect(out, `${args.join(" ")} with ${url.replace(PASSWORD, "<pw>")}`).not.toContain(PASSWORD)
        expect(out).not.toContain(encodeURIComponent(PASSWORD + "/%"))
      }
    }
  })
})

describe("a fleet URL naming a file that cannot be read (issue 33 item 6)", () => {
  const MISSING = "/nonexistent-ocpool/ca.pem"
  const url = `postgres://pool:${PASSWORD}@127.0.0.1:1/ocpool?sslmode=verify-full&sslrootcert=${MISSING}`

  it("US-52 pgFileProblem names the parameter and the file; a readable file, sslrootcert=system and a URL without files pass", () => {
    expect(pgFileProblem(url)).toBe(`sslrootcert ${MISSING} cannot be read (no such file)`)
    expect(pgFileProblem(`postgres://h/db?sslkey=${MISSING}`)).toBe(`sslkey ${MISSING} cannot be read (no such file)`)
    expect(pgFileProblem(`postgres://h/db?sslrootcert=${cli}`)).toBeUndefined()
    expect(pgFileProblem("postgres://h/db?sslrootcert=system")).toBeUndefined()
    expect(pgFileProblem("postgres://h/db")).toBeUndefined()
  })

  it("US-52 fleet init says so in one line with exit 2; status falls back to the state directory with one warning naming the file; never an internal error", { timeout: 60_000 }, () => {
    const home = mkdtempSync(join(tmpdir(), "ocpool-sslfile-"))
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: join(home, ".state"), OCPOOL_STATE_DIR: join(home, "state"), NO_COLOR: "1" }
    const init = spawnSync(process.execPath, [cli, "fleet", "init", "--url", url], { env, encoding: "utf8", timeout: 30_000 })
    expect(init.status).toBe(2)
    expect(init.stderr.trim().split("\n")).toEqual([`ocpool: --url postgres://pool:***@127.0.0.1:1/ocpool?sslmode=verify-full&sslrootcert=${MISSING}: sslrootcert ${MISSING} cannot be read (no such file)`])
    const status = spawnSync(process.execPath, [cli, "status"], { env: { ...env, OCPOOL_STATE_URL: url }, encoding: "utf8", timeout: 30_000 })
    expect(status.status).toBe(0)
    expect(status.stdout).toContain("claims in flight")
    expect(`${status.stdout}${status.stderr}`).toContain(`sslrootcert ${MISSING} cannot be read (no such file); using the state directory`)
    expect(`${init.stderr}${status.stdout}${status.stderr}`).not.toMatch(/internal error|S3cretPw9/)
  })
})
