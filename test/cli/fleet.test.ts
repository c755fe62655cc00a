/** `ocpool fleet init` and `ocpool fleet drive` (issue 22) in-process through `runCli`: usage errors, bad input, help. No server. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runCli } from "../../src/cli/app.js"
import { captureStream, type CliIo } from "../../src/cli/output.js"

const run = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}) =>
  Effect.gen(function* () {
    const io: CliIo & { stdout: { text: string }; stderr: { text: string } } = { stdout: captureStream(false), stderr: captureStream(false), stdinIsTTY: false, env }
    const code = yield* runCli(["node", "ocpool", "fleet", ...args], io)
    return { code, stdout: io.stdout.text, stderr: io.stderr.text }
  })

const dir = () => {
  const d = mkdtempSync(join(tmpdir(), "ocpool-fleet-cli-"))
  chmodSync(d, 0o700)
  return d
}
const file = (text: string) => {
  const p = join(dir(), "options.json")
  writeFileSync(p, text)
  return p
}
const GOOD = ["--picks", "3", "--hold", "2", "--seed", "1", "--pause-ms", "0", "--start-at", "0"]
const drive = (config: string, over: ReadonlyArray<string> = GOOD) => run(["drive", "--config", config, ...over])

/** One diagnostic line, exit 2. */
const oneLine = (r: { code: number; stdout: string; stderr: string }, words: RegExp) => {
  expect(r.code).toBe(2)
  expect(r.stdout).toBe("")
  const lines = r.stderr.trimEnd().split("\n")
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(/^ocpool: /)
  expect(lines[0]).toMatch(words)
}

describe("ocpool fleet init", () => {
  it.effect("US-52 no --url and no OCPOOL_STATE_URL: one line, exit 2", () =>
    Effect.gen(function* () {
      oneLine(yield* run(["init"]), /--url .*OCPOOL_STATE_URL/)
      oneLine(yield* run(["init"], { OCPOOL_STATE_URL: "" }), /--url/)
    })
  )
  it.effect("US-52 a URL checkUrl refuses: one line naming --url, the password never shown, exit 2", () =>
    Effect.gen(function* () {
      const r = yield* run(["init", "--url", "mysql://u:hunter22@db:3306/x"])
      // not postgres://: everything from the first colon is hidden (a password can hold // and :)
      oneLine(r, /--url mysql:\*\*\*@db:3306\/x invalid \(not a postgres:\/\/ URL/)
      expect(r.stderr).not.toContain("hunter22")
      oneLine(yield* run(["init"], { OCPOOL_STATE_URL: "not a url" }), /--url .* invalid \(not a URL\)/)
    })
  )
  it.effect("US-52 a bad --schema: one line naming --schema, exit 2", () =>
    Effect.gen(function* () {
      oneLine(yield* run(["init", "--url", "postgres://u:p@127.0.0.1:1/db", "--schema", "Bad-Name"]), /--schema "Bad-Name" invalid/)
    })
  )
  it.effect("US-52 a server that is not there: one line with the masked URL and why, exit 1, no password", () =>
    Effect.gen(function* () {
      const r = yield* run(["init", "--url", "postgres://u:hunter22@127.0.0.1:1/db"], { OCPOOL_STATE_DIR: dir() })
      expect(r.code).toBe(1)
      expect(r.stdout).toBe("")
      const lines = r.stderr.trimEnd().split("\n")
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^ocpool: cannot reach PostgreSQL at postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db: \S/)
      expect(r.stderr).not.toContain("hunter22")
    })
  , 30_000)
  it.effect("US-52 --help tells what it does, the option it prints and the exit codes", () =>
    Effect.gen(function* () {
      const r = yield* run(["init", "--help"])
      expect(r.code).toBe(0)
      for (const w of ["--url", "--schema", "OCPOOL_STATE_URL", "masked", "migrations", "Exit 0; 1", "2 without a URL"]) expect(r.stdout).toContain(w)
    })
  )
})

describe("ocpool fleet drive", () => {
  it.effect("US-52 each missing or bad flag: one line naming it, exit 2", () =>
    Effect.gen(function* () {
      const config = file('{"models":{"slots":[{"model":"p/a","weight":1}]}}')
      const without = (flag: string) => {
        const i = GOOD.indexOf(flag)
        return [...GOOD.slice(0, i), ...GOOD.slice(i + 2)]
      }
      const withValue = (flag: string, value: string) => GOOD.map((v, i) => (GOOD[i - 1] === flag ? value : v))
      oneLine(yield* run(["drive", ...GOOD]), /--config is required/)
      for (const flag of ["--picks", "--hold", "--seed", "--pause-ms", "--start-at"]) {
        oneLine(yield* drive(config, without(flag)), new RegExp(`${flag} is required`))
        oneLine(yield* drive(config, withValue(flag, "x1")), new RegExp(`${flag} "x1" invalid`))
        oneLine(yield* drive(config, withValue(flag, "-1")), new RegExp(`${flag} "-1" invalid`))
      }
      oneLine(yield* drive(config, withValue("--picks", "0")), /--picks "0" invalid \(a positive integer\)/)
      oneLine(yield* drive(config, withValue("--hold", "0")), /--hold "0" invalid \(a positive integer\)/)
      oneLine(yield* drive(config, withValue("--picks", "1.5")), /--picks "1.5" invalid/)
    })
  )
  it.effect("US-52 --cool-after needs --cool-model and --cool-ms, each valid: one line, exit 2", () =>
    Effect.gen(function* () {
      const config = file('{"models":{"slots":[{"model":"p/a","weight":1}]}}')
      oneLine(yield* drive(config, [...GOOD, "--cool-after", "1"]), /--cool-after needs --cool-model and --cool-ms/)
      oneLine(yield* drive(config, [...GOOD, "--cool-after", "1", "--cool-model", "p/a"]), /--cool-after needs --cool-model and --cool-ms/)
      oneLine(yield* drive(config, [...GOOD, "--cool-model", "p/a", "--cool-ms", "100"]), /need --cool-after/)
      oneLine(yield* drive(config, [...GOOD, "--cool-after", "0", "--cool-model", "p/a", "--cool-ms", "100"]), /--cool-after "0" invalid/)
      oneLine(yield* drive(config, [...GOOD, "--cool-after", "9", "--cool-model", "p/a", "--cool-ms", "100"]), /--cool-after 9 invalid \(at most --picks 3\)/)
      oneLine(yield* drive(config, [...GOOD, "--cool-after", "1", "--cool-model", "nomodel", "--cool-ms", "100"]), /--cool-model "nomodel" invalid/)
      oneLine(yield* drive(config, [...GOOD, "--cool-after", "1", "--cool-model", "p/a", "--cool-ms", "0"]), /--cool-ms "0" invalid/)
    })
  )
  it.effect("US-52 an unreadable, non-JSON or non-object config file: one line naming --config, exit 2", () =>
    Effect.gen(function* () {
      oneLine(yield* drive(join(dir(), "missing.json")), /--config .*missing\.json: cannot read it \(ENOENT\)/)
      oneLine(yield* drive(file("{not json")), /--config .*: not valid JSON/)
      oneLine(yield* drive(file("[1,2]")), /--config .*: not a JSON object/)
    })
  )
  it.effect("US-52 --help tells the interface: every flag and every output line", () =>
    Effect.gen(function* () {
      const r = yield* run(["drive", "--help"])
      expect(r.code).toBe(0)
      for (const w of ["--config FILE", "--picks N", "--hold H", "--seed S", "--pause-ms P", "--start-at EPOCH_MS", "--cool-after K", "--cool-model MODEL", "--cool-ms W", "cancelled task", "Exit 0; 2"])
        expect(r.stdout).toContain(w)
      for (const ev of ['{"ev":"start","host","pid","backend"}', '{"ev":"pick","host","key","model","slot","pass","load","cap","cooling","at"}', '{"ev":"release","host","key","at"}', '{"ev":"cool","host","model","until","at"}', '{"ev":"done","host","picks","failOpens","fallbacks"}'])
        expect(r.stdout).toContain(ev)
      const top = yield* run(["--help"])
      expect(top.stdout).toContain("init")
      expect(top.stdout).toContain("drive")
    })
  )
})
