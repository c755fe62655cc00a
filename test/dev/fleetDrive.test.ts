/**
 * The fleet driver (issue 22 item 5), a development entry since issue 34 (src/dev/fleetDrive.ts, built to
 * dist/dev-fleet-drive.js), in-process through `runDrive`: the flags, lines and exit codes `ocpool fleet
 * drive` had. Usage errors, bad input, help. No server.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { captureStream, type CliIo } from "../../src/cli/output.js"
import { runDrive } from "../../src/dev/fleetDrive.js"
import { oneLine } from "../support/cliLines.js"

const run = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}) =>
  Effect.gen(function* () {
    const io: CliIo & { stdout: { text: string }; stderr: { text: string } } = { stdout: captureStream(false), stderr: captureStream(false), stdinIsTTY: false, env }
    const code = yield* runDrive(args, io)
    return { code, stdout: io.stdout.text, stderr: io.stderr.text }
  })

const dir = () => {
  const d = mkdtempSync(join(tmpdir(), "ocpool-fleet-drive-"))
  chmodSync(d, 0o700)
  return d
}
const file = (text: string) => {
  const p = join(dir(), "options.json")
  writeFileSync(p, text)
  return p
}
const GOOD = ["--picks", "3", "--hold", "2", "--seed", "1", "--pause-ms", "0", "--start-at", "0"]
const drive = (config: string, over: ReadonlyArray<string> = GOOD) => run(["--config", config, ...over])

/** A usage problem: its line, then the usage and where the help is; exit 2. */
const usage = (r: { code: number; stdout: string; stderr: string }, words: RegExp) => {
  expect(r.code).toBe(2)
  expect(r.stdout).toBe("")
  const lines = r.stderr.trimEnd().split("\n")
  expect(lines[0]).toMatch(/^ocpool: fleet drive: /)
  expect(lines[0]).toMatch(words)
  expect(lines[1]).toMatch(/^usage: node dist\/dev-fleet-drive\.js \[--config FILE\]/)
  expect(lines.at(-1)).toBe("'node dist/dev-fleet-drive.js --help' shows its flags.")
}

describe("the fleet driver (node dist/dev-fleet-drive.js)", () => {
  it.effect("US-52 each missing or bad flag: one line naming it, exit 2", () =>
    Effect.gen(function* () {
      const config = file('{"models":{"slots":[{"model":"p/a","weight":1}]}}')
      const without = (flag: string) => {
        const i = GOOD.indexOf(flag)
        return [...GOOD.slice(0, i), ...GOOD.slice(i + 2)]
      }
      const withValue = (flag: string, value: string) => GOOD.map((v, i) => (GOOD[i - 1] === flag ? value : v))
      oneLine(yield* run([...GOOD]), /--config is required/)
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
      const r = yield* run(["--help"])
      expect(r.code).toBe(0)
      for (const w of ["--config FILE", "--picks N", "--hold H", "--seed S", "--pause-ms P", "--start-at EPOCH_MS", "--cool-after K", "--cool-model MODEL", "--cool-ms W", "cancelled task", "Exit 0; 2"])
        expect(r.stdout).toContain(w)
      for (const ev of ['{"ev":"start","host","pid","backend"}', '{"ev":"pick","host","key","model","slot","pass","load","cap","cooling","at"}', '{"ev":"release","host","key","at"}', '{"ev":"cool","host","model","until","at"}', '{"ev":"done","host","picks","failOpens","fallbacks"}'])
        expect(r.stdout).toContain(ev)
      expect(r.stdout).toMatch(/^usage: node dist\/dev-fleet-drive\.js /)
    })
  )
})

describe("the fleet driver's argv (issue 34: read as `ocpool fleet drive` read it)", () => {
  it.effect("US-52 an unknown flag, a flag without its value, one given twice, a word left over: one line, the usage, exit 2", () =>
    Effect.gen(function* () {
      usage(yield* run([...GOOD, "--bogus", "1"]), /unknown flag '--bogus'/)
      usage(yield* run([...GOOD, "--config"]), /--config needs a value \(--config FILE\)/)
      usage(yield* run(["--config=", ...GOOD]), /--config needs a value/)
      usage(yield* run(["--picks", "--hold", "2"]), /--picks needs a value \(--picks N\)/)
      usage(yield* run([...GOOD, "--picks", "2"]), /--picks given more than once/)
      usage(yield* run([...GOOD, "x"]), /unexpected argument 'x'/)
      // a problem wins over --help, as in the CLI
      usage(yield* run(["--help", "--bogus"]), /unknown flag '--bogus'/)
    })
  )
  it.effect("US-52 --flag=VALUE and a value starting with - are read as values", () =>
    Effect.gen(function* () {
      const config = file('{"models":{"slots":[{"model":"p/a","weight":1}]}}')
      oneLine(yield* run([`--config=${config}`, "--picks=-1", "--hold", "2", "--seed", "1", "--pause-ms", "0", "--start-at", "0"]), /--picks "-1" invalid/)
      const h = yield* run([...GOOD, "-h"])
      expect(h.code).toBe(0)
      expect(h.stdout).toContain("--cool-ms W")
    })
  )
})
