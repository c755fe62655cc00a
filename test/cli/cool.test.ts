/** `ocpool cool`, `cool clear`, `cool set` (issue 32): the built CLI over a real state directory. */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cooldownIn, seedCooldowns } from "../support/stateDb.js"

const cli = join(new URL("../../", import.meta.url).pathname, "bin/ocpool.js")
const stateDir = () => join(mkdtempSync(join(tmpdir(), "ocpool-cool-")), "state")
const ocpool = (args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 30_000, env: { ...process.env, OCPOOL_STATE_DIR: "", OCPOOL_STATE_URL: "", NO_COLOR: "1" } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe("ocpool cool (issue 32)", () => {
  it("US-4 lists what cools; set benches a model with its note; clear ends it for every process, strikes kept; --json", () => {
    const dir = stateDir()
    expect(ocpool(["cool", "--state-dir", dir])).toEqual({ code: 0, stdout: "no model cooling\n", stderr: "" })
    const now = Date.now()
    seedCooldowns(dir, [{ model: "zen/alpha", reason: "rate_limit", strikes: 2, scope: "model", since: now, until: now + 600_000, source: "backoff" }])
    const set = ocpool(["cool", "set", "go/gamma", "--for", "2h", "--reason", "top-up \u001b[31mtomorrow", "--state-dir", dir])
    expect(set.code).toBe(0)
    expect(set.stdout).toMatch(/^go\/gamma cools by hand until \d\d:\d\dZ \(2h00m\)\n$/)
    const list = ocpool(["cool", "--state-dir", dir])
    expect(list.stdout.split("\n").filter((l) => l !== "")).toEqual([
      expect.stringMatching(/^go\/gamma {2}manual {2}strike 0 {2}until \d\d:\d\dZ \(in 1h59m\) {2}source manual {2}"top-up tomorrow"$/),
      expect.stringMatching(/^zen\/alpha {2}rate_limit {2}strike 2 {2}until \d\d:\d\dZ \(in (9m5\ds|10m00s)\) {2}source backoff$/)
    ])
    const json = JSON.parse(ocpool(["cool", "--json", "--state-dir", dir]).stdout) as { cooling: Array<{ model: string; note: string | null }> }
    expect(json.cooling.map((c) => [c.model, c.note === null])).toEqual([
      ["go/gamma", false],
      ["zen/alpha", true]
    ])
    const cleared = ocpool(["cool", "clear", "zen/alpha", "--state-dir", dir])
    expect(cleared.code).toBe(0)
    expect(cleared.stdout).toMatch(/^cleared zen\/alpha \(rate_limit, strike 2, was until \d\d:\d\dZ\)\n$/)
    expect(cooldownIn(dir, "zen/alpha")).toMatchObject({ source: "cleared", strikes: 2 })
    expect(ocpool(["cool", "--state-dir", dir]).stdout).not.toContain("zen/alpha")
    const all = JSON.parse(ocpool(["cool", "clear", "--all", "--reset-strikes", "--json", "--state-dir", dir]).stdout) as { cleared: Array<{ model: string }>; strikesReset: boolean }
    expect([all.cleared.map((c) => c.model), all.strikesReset]).toEqual([["go/gamma"], true])
    expect(cooldownIn(dir, "go/gamma")).toMatchObject({ source: "cleared", strikes: 0 })
    expect(ocpool(["cool", "--state-dir", dir]).stdout).toBe("no model cooling\n")
  })

  it("US-4 a model named that is not cooling: said, exit 1; --provider with nothing cooling: said, exit 0", () => {
    const dir = stateDir()
    expect(ocpool(["cool", "clear", "zen/alpha", "--state-dir", dir])).toEqual({ code: 1, stdout: "zen/alpha is not cooling\n", stderr: "" })
    expect(ocpool(["cool", "clear", "--provider", "zen", "--state-dir", dir])).toEqual({ code: 0, stdout: "no model of zen was cooling\n", stderr: "" })
  })

  it("US-4 bad input is one line and exit 2: no selector, two selectors, a bad model, a bad --for", () => {
    const dir = stateDir()
    expect(ocpool(["cool", "clear", "--state-dir", dir])).toMatchObject({ code: 2, stderr: "ocpool: name the models to clear, or --provider P, or --all\n" })
    expect(ocpool(["cool", "clear", "zen/a", "--all", "--state-dir", dir])).toMatchObject({ code: 2, stderr: "ocpool: give models, --provider or --all, only one of them\n" })
    expect(ocpool(["cool", "set", "alpha", "--for", "1m", "--state-dir", dir])).toMatchObject({ code: 2, stderr: 'ocpool: "alpha": not provider/model\n' })
    expect(ocpool(["cool", "set", "zen/a", "--for", "9d", "--state-dir", dir]).code).toBe(2)
    expect(ocpool(["cool", "set", "zen/a", "--for", "200h", "--state-dir", dir])).toMatchObject({ code: 2, stderr: "ocpool: --for 200h: too long: at most 7 days (168h)\n" })
  })

  it("US-46 --help of each names what it does and its exit codes", () => {
    expect(ocpool(["cool", "--help"]).stdout).toContain("List the models that cool now")
    expect(ocpool(["cool", "clear", "--help"]).stdout.replace(/\s+/g, " ")).toContain("Exit 0; 1 if a model named was not cooling; 2 bad input.")
    expect(ocpool(["cool", "set", "--help"]).stdout).toContain("--for DUR")
  })
})
