/**
 * `ocpool doctor`'s `models` check through the built CLI (issue 33, item 12): a pool file with a typo
 * (`openrouter/laguna-s-21:free`) is a warning with a suggestion, a provider without credentials is
 * one, and no credential value is ever printed. HOME, the XDG directories and the working directory
 * are temporary; the catalog is `test/fixtures/models-catalog.json` as opencode's cache.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cli, ensureBuilt } from "./builtCli.js"

ensureBuilt("doctor --help")

const FIXTURE = new URL("../fixtures/models-catalog.json", import.meta.url).pathname

/** A temporary home with the pool file, opencode's cached catalog and, when given, its auth.json. */
const home = (pool: string, auth?: unknown): string => {
  const h = mkdtempSync(join(tmpdir(), "ocpool-doctor-models-"))
  mkdirSync(join(h, "config", "opencode-pool"), { recursive: true })
  writeFileSync(join(h, "config", "opencode-pool", "pool.txt"), pool)
  mkdirSync(join(h, "cache", "opencode"), { recursive: true })
  copyFileSync(FIXTURE, join(h, "cache", "opencode", "models.json"))
  if (auth !== undefined) {
    mkdirSync(join(h, "data", "opencode"), { recursive: true })
    writeFileSync(join(h, "data", "opencode", "auth.json"), JSON.stringify(auth), { mode: 0o600 })
  }
  return h
}

const doctor = (h: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [cli, "doctor", ...args], {
    encoding: "utf8",
    timeout: 30_000,
    cwd: h,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: h,
      XDG_CONFIG_HOME: join(h, "config"),
      XDG_CACHE_HOME: join(h, "cache"),
      XDG_DATA_HOME: join(h, "data"),
      OCPOOL_STATE_DIR: join(h, "state"),
      ...env
    }
  })

interface Report {
  readonly checks: Array<{ id: string; status: string; detail: string }>
  readonly ok: boolean
}

describe("ocpool doctor: the slot models (issue 33, item 12)", () => {
  it("US-46 a typo in the pool file warns with the model meant, in text and --json; a warning leaves the exit code alone", () => {
    const h = home("opencode/big-pickle 2\nopenrouter/laguna-s-21:free\n")
    const text = doctor(h, [], { OPENROUTER_API_KEY: "sk-or-v1-secret-value" })
    expect(text.stdout).toContain(
      "warn models       openrouter/laguna-s-21:free (slot 2): unknown model: openrouter has no model laguna-s-21:free in opencode's model catalog (did you mean openrouter/poolside/laguna-s-2.1:free?)"
    )
    expect(text.stdout).not.toContain("sk-or-v1-secret-value")
    const json = doctor(h, ["--json"], { OPENROUTER_API_KEY: "sk-or-v1-secret-value" })
    const models = (JSON.parse(json.stdout) as Report).checks.filter((c) => c.id === "models")
    expect(models).toEqual([
      {
        id: "models",
        status: "warn",
        detail: "openrouter/laguna-s-21:free (slot 2): unknown model: openrouter has no model laguna-s-21:free in opencode's model catalog (did you mean openrouter/poolside/laguna-s-2.1:free?)"
      }
    ])
    // a warning is not a failure: doctor exits 0 when no check fails
    expect((JSON.parse(json.stdout) as Report).checks.filter((c) => c.status === "fail")).toEqual([])
    expect(json.status).toBe(0)
  })

  it("US-46 a provider without credentials warns naming its env var; an auth.json entry counts and its key is never shown", () => {
    const pool = "opencode/big-pickle\nopenrouter/poolside/laguna-s-2.1:free\n"
    const bare = (JSON.parse(doctor(home(pool), ["--json"]).stdout) as Report).checks.filter((c) => c.id === "models")
    expect(bare).toEqual([
      {
        id: "models",
        status: "warn",
        detail:
          "openrouter (slot 2): no credentials: none of OPENROUTER_API_KEY is set and opencode has no key for it (opencode auth login, or provider.openrouter.options.apiKey); opencode loads no openrouter model without one"
      }
    ])
    const withAuth = doctor(home(pool, { openrouter: { type: "api", key: "sk-or-v1-from-auth-json" } }), [])
    expect(withAuth.stdout).toMatch(/^ok {3}models {7}2 slot models known to opencode \(catalog .*models\.json\); every provider has credentials or needs none$/m)
    expect(withAuth.stdout).not.toContain("sk-or-v1-from-auth-json")
  })

  it("US-46 without opencode's cached catalog the check says it did not run, and nothing else", () => {
    const h = home("openrouter/qwen3-codr:free\n")
    const r = doctor(h, ["--json"], { XDG_CACHE_HOME: join(h, "no-cache") })
    expect((JSON.parse(r.stdout) as Report).checks.filter((c) => c.id === "models")).toEqual([
      {
        id: "models",
        status: "warn",
        detail: `slot models not checked: no model catalog at ${join(h, "no-cache", "opencode", "models.json")} (opencode writes it when it fetches its model list; run opencode once while online)`
      }
    ])
  })
})
