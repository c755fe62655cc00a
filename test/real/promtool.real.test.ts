/**
 * `ocpool metrics` checked by Prometheus's own tool (issue 36): `promtool check metrics` on a `--once`
 * exposition of a state directory whose counters carry hostile label values (quotes, a backslash, a
 * newline, NUL, a lone surrogate), written through the real SQLite port; and `promtool check rules` on
 * the shipped alerting rules (examples/ocpool-alerts.yml). promtool comes with the Debian package
 * prometheus (scripts/ci-real-deps.sh).
 */
import { describe, expect, it } from "@effect/vitest"
import { beforeAll } from "vitest"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cli, ensureBuilt, root } from "../cli/builtCli.js"
import { commitInto, metricsStateDir } from "../cli/metricsState.js"

const PROMTOOL = ["/usr/bin/promtool", "/usr/local/bin/promtool"].find(existsSync)
if (PROMTOOL === undefined) throw new Error("promtool not found: install the Debian package prometheus (apt-get install -y prometheus)")

beforeAll(() => ensureBuilt("metrics --help"), 120_000)

describe("ocpool metrics against promtool", () => {
  it("US-53 promtool check metrics accepts a --once exposition with hostile label values", async () => {
    const dir = await metricsStateDir()
    // a model name no exposition may break on either, in a gauge: quotes, a backslash, a newline, a lone surrogate
    const now = Date.now()
    await commitInto(dir, { cool: [{ model: `p/m"o\\d\nel\uDC00`, reason: "quota", strikes: 1, scope: "model", since: now, until: now + 60_000, source: "backoff" }], uncool: [] })
    const env = { ...process.env, XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "ocpool-metrics-cfg-")), OCPOOL_STATE_DIR: "", OCPOOL_STATE_URL: "" }
    const once = spawnSync(process.execPath, [cli, "metrics", "--once", "--state-dir", dir], { encoding: "utf8", env, timeout: 30_000 })
    expect(once.stderr).toBe("")
    expect(once.status).toBe(0)
    expect(once.stdout).toContain('\\"x\\"')
    expect(once.stdout).toContain('ocpool_cooling_seconds{model="p/m\\"o\\\\d\\nel\uFFFD",reason="quota"}')
    const check = spawnSync(PROMTOOL, ["check", "metrics"], { input: once.stdout, encoding: "utf8", timeout: 30_000 })
    expect({ status: check.status, stdout: check.stdout, stderr: check.stderr }).toEqual({ status: 0, stdout: "", stderr: "" })
  })

  it("US-53 promtool check rules accepts examples/ocpool-alerts.yml", () => {
    const check = spawnSync(PROMTOOL, ["check", "rules", join(root, "examples/ocpool-alerts.yml")], { encoding: "utf8", timeout: 30_000 })
    expect(check.stderr).toBe("")
    expect(check.status).toBe(0)
    expect(check.stdout).toMatch(/SUCCESS: \d+ rules found/)
  })

  it("US-53 the alerting rules fire as their unit tests say (promtool test rules examples/ocpool-alerts.test.yml)", () => {
    const test = spawnSync(PROMTOOL, ["test", "rules", join(root, "examples/ocpool-alerts.test.yml")], { encoding: "utf8", timeout: 30_000 })
    expect(`${test.stdout}${test.stderr}`).toContain("SUCCESS")
    expect(test.status).toBe(0)
  })
})
