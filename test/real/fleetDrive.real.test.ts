/**
 * `ocpool fleet init` and the fleet driver (issue 22; `node dist/dev-fleet-drive.js` since issue 34) as built, against a real throwaway PostgreSQL
 * (test/real/pgCluster.ts): init migrates and prints the option with the password masked; two drivers
 * with different host ids share one budget (no pick over its cap, fleet-wide) and one cooldown table
 * (host A's 429 keeps host B off that model from 1 s after A's cool line). Needs `npm run build` first.
 */
import { describe, expect, it } from "@effect/vitest"
import { afterAll } from "vitest"
import { spawn, spawnSync } from "node:child_process"
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startPgCluster } from "./pgCluster.js"

const root = new URL("../../", import.meta.url).pathname
const cli = join(root, "bin/ocpool.js")
const driver = join(root, "dist/dev-fleet-drive.js")
const cluster = await startPgCluster()
afterAll(() => cluster.stop())

const PASSWORD = new URL(cluster.url).password
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "ocpool-drive-"))
  chmodSync(d, 0o700)
  return d
}
const baseEnv = (): NodeJS.ProcessEnv => ({ ...process.env, OCPOOL_STATE_URL: "", OCPOOL_STATE_DIR: "", XDG_CONFIG_HOME: tmp(), XDG_STATE_HOME: tmp(), NO_COLOR: "1" })

type Line = Record<string, unknown> & { ev: string; host: string }

/** Runs the fleet driver as its own process; resolves with its exit code and parsed stdout lines. */
const drive = (host: string, config: string, args: ReadonlyArray<string>): Promise<{ code: number | null; lines: Array<Line>; raw: Array<string>; stderr: string }> =>
  new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [driver, "--config", config, ...args], { env: { ...baseEnv(), OCPOOL_HOST_ID: host }, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    p.stdout.on("data", (d: Buffer) => (out += d.toString()))
    p.stderr.on("data", (d: Buffer) => (err += d.toString()))
    p.on("error", reject)
    p.on("close", (code) => {
      const raw = out.split("\n").filter((l) => l !== "")
      resolve({ code, raw, lines: raw.map((l) => JSON.parse(l) as Line), stderr: err })
    })
  })

const NUM = "-?\\d+(?:\\.\\d+)?"
const STR = '"(?:[^"\\\\]|\\\\.)*"'
const FORMATS: Record<string, RegExp> = {
  start: new RegExp(`^\\{"ev":"start","host":${STR},"pid":\\d+,"backend":"(postgres|file)"\\}$`),
  pick: new RegExp(`^\\{"ev":"pick","host":${STR},"key":${STR},"model":${STR},"slot":\\d+,"pass":"(first|second|overflow)","load":\\d+,"cap":\\d+,"cooling":\\[(${STR}(,${STR})*)?\\],"at":${NUM}\\}$`),
  release: new RegExp(`^\\{"ev":"release","host":${STR},"key":${STR},"at":${NUM}\\}$`),
  cool: new RegExp(`^\\{"ev":"cool","host":${STR},"model":${STR},"until":\\d+,"at":${NUM}\\}$`),
  done: new RegExp(`^\\{"ev":"done","host":${STR},"picks":\\d+,"failOpens":\\d+,"fallbacks":\\d+\\}$`)
}

const configFile = () => {
  const dir = tmp()
  const path = join(dir, "options.json")
  // the URL comes from OCPOOL_STATE_URL? no: from the config, as a user may write it
  writeFileSync(path, JSON.stringify({ state: { backend: "postgres", url: cluster.url }, stateDir: join(dir, "state"), lockWaitMs: 60_000, models: { slots: [{ model: "p/a", weight: 1 }, { model: "p/b", weight: 1 }] } }))
  return path
}

describe("ocpool fleet (real PostgreSQL)", () => {
  it("US-52 fleet init: the option with the URL masked, schema version 5, never the password; again: the same", () => {
    for (let round = 0; round < 2; round++) {
      const r = spawnSync(process.execPath, [cli, "fleet", "init", "--url", cluster.url], { encoding: "utf8", env: baseEnv(), timeout: 60_000 })
      expect(r.stderr).toBe("")
      expect(r.status).toBe(0)
      expect(r.stdout).not.toContain(PASSWORD)
      const masked = cluster.url.replace(`:${PASSWORD}@`, ":***@")
      expect(r.stdout).toContain(`schema ocpool at version 5`)
      expect(r.stdout).toContain(`"state": { "backend": "postgres", "url": ${JSON.stringify(masked)}, "schema": "ocpool" }`)
      expect(r.stdout).toContain("OCPOOL_STATE_URL")
    }
    // the URL from the environment, another schema
    const e = spawnSync(process.execPath, [cli, "fleet", "init", "--schema", "team_b"], { encoding: "utf8", env: { ...baseEnv(), OCPOOL_STATE_URL: cluster.url }, timeout: 60_000 })
    expect(e.status).toBe(0)
    expect(e.stdout).toContain("schema team_b at version 5")
    expect(e.stdout).not.toContain(PASSWORD)
  }, 120_000)

  /** Both drivers, started together; every line as documented, every key released. */
  const pair = async (aExtra: ReadonlyArray<string>, pauseMs = 15) => {
    const config = configFile()
    const startAt = Date.now() + 1500
    const common = ["--picks", "40", "--hold", "2", "--pause-ms", String(pauseMs), "--start-at", String(startAt)]
    const [a, b] = await Promise.all([drive("host-a", config, [...common, "--seed", "1", ...aExtra]), drive("host-b", config, [...common, "--seed", "2"])])
    for (const r of [a, b]) {
      expect(r.code, r.stderr).toBe(0)
      for (const l of r.raw) expect(l).toMatch(FORMATS[(JSON.parse(l) as Line).ev]!)
      expect(r.lines[0]).toMatchObject({ ev: "start", backend: "postgres" })
      expect(r.lines.at(-1)).toMatchObject({ ev: "done", picks: 40, fallbacks: 0 })
      const picks = r.lines.filter((l) => l.ev === "pick")
      expect(picks).toHaveLength(40)
      expect(picks[0]!.at as number).toBeGreaterThanOrEqual(startAt)
      // every key picked is released once, and never more than 2 held at a pick
      expect(r.lines.filter((l) => l.ev === "release").map((l) => l.key).sort()).toEqual(picks.map((p) => p.key).sort())
      let held = 0
      for (const l of r.lines) {
        if (l.ev === "pick") held++
        if (l.ev === "release") held--
        expect(held).toBeLessThanOrEqual(2)
      }
      for (const p of picks) {
        expect(p.cap).toBe(2)
        expect(p.load as number).toBeGreaterThanOrEqual(1)
      }
    }
    expect(a.lines[0]!.host).toBe("host-a")
    expect(b.lines[0]!.host).toBe("host-b")
    return { a: a.lines, b: b.lines }
  }
  const picksOf = (lines: ReadonlyArray<Line>) => lines.filter((l) => l.ev === "pick")

  it("US-52 two drivers with different host ids, 2 slots of cap 2, hold 2 each: no pick over its cap, fleet-wide", async () => {
    const { a, b } = await pair([])
    const picks = [...picksOf(a), ...picksOf(b)]
    for (const p of picks) {
      expect(p.load as number).toBeLessThanOrEqual(p.cap as number)
      expect(p.pass).not.toBe("overflow")
      expect(p.cooling).toEqual([])
    }
    // the budget is shared: some pick saw the other host's claims (a load of 2 on a slot one host holds once)
    expect(picks.some((p) => p.pass === "second")).toBe(true)
  }, 120_000)

  it("US-52 host A's 429 of p/a: from 1 s after A's cool line, B's picks list p/a cooling and take p/a only when p/b is full", async () => {
    const { a, b } = await pair(["--cool-after", "5", "--cool-model", "p/a", "--cool-ms", "20000"], 150)
    const cools = a.filter((l) => l.ev === "cool")
    expect(cools).toHaveLength(1)
    const cool = cools[0]!
    expect(cool).toMatchObject({ host: "host-a", model: "p/a" })
    // the cool line comes right after A's 5th pick
    expect(a.indexOf(cool)).toBe(a.indexOf(picksOf(a)[4]!) + 1)
    expect(cool.until as number).toBeGreaterThan((cool.at as number) + 19_000)
    expect(cool.until as number).toBeLessThan((cool.at as number) + 21_000)
    const after = picksOf(b).filter((l) => (l.at as number) > (cool.at as number) + 1000 && (l.at as number) < (cool.until as number))
    expect(after.length).toBeGreaterThan(0)
    for (const p of after) {
      expect(p.cooling).toContain("p/a")
      // p/b is another choice while it is under its cap; past it, both passes are spent (the overflow pass)
      if (p.model === "p/a") expect(p.pass).toBe("overflow")
      if (p.pass !== "overflow") expect(p.load as number).toBeLessThanOrEqual(p.cap as number)
    }
    for (const p of picksOf(a).filter((l) => (l.at as number) > (cool.at as number))) expect(p.cooling).toContain("p/a")
    // nothing before the cool saw p/a cooling
    for (const p of [...picksOf(a), ...picksOf(b)].filter((l) => (l.at as number) < (cool.at as number) - 1000)) expect(p.cooling).toEqual([])
  }, 120_000)
})
