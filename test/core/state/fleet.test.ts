/** Fleet mode's settings (issue 22): which backend, the URL masked everywhere, the host id. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { parseSettings } from "../../../src/core/options.js"
import { checkUrl, DEFAULT_SCHEMA, FLEET_LEASE_MS, hostIdOf, maskUrl, parseStateBackend, secretsOf } from "../../../src/core/state/fleet.js"

const URL_A = "postgres://pool:s3cret@db.example.com:5432/ocpool?sslmode=require"

describe("fleet settings", () => {
  it("US-52 option state selects PostgreSQL with the default schema and lease; OCPOOL_STATE_URL wins over the option", () => {
    expect(parseStateBackend({ backend: "postgres", url: URL_A }, {})).toEqual({
      state: { backend: "postgres", url: URL_A, schema: DEFAULT_SCHEMA, leaseMs: FLEET_LEASE_MS, from: "option" },
      warnings: []
    })
    const env = parseStateBackend({ backend: "file" }, { OCPOOL_STATE_URL: "postgresql://x@h/db" })
    expect(env.state).toMatchObject({ backend: "postgres", url: "postgresql://x@h/db", from: "env" })
    expect(parseStateBackend({ backend: "postgres", url: URL_A, schema: "team_pool", leaseMs: 10_000 }, {}).state).toMatchObject({ schema: "team_pool", leaseMs: 10_000 })
    expect(parseStateBackend(undefined, {})).toEqual({ state: { backend: "sqlite" }, warnings: [] })
    expect(parseStateBackend({ backend: "file" }, { OCPOOL_STATE_URL: "" }).state).toEqual({ backend: "sqlite" })
  })

  it("US-52 every bad choice falls back to the state directory with one warning, and no warning carries the password", () => {
    const cases: ReadonlyArray<[unknown, Record<string, string>, RegExp]> = [
      ["postgres", {}, /option state must be an object/],
      [{ backend: "redis" }, {}, /state\.backend "redis" invalid/],
      [{ backend: "postgres" }, {}, /no url is given/],
      [{ backend: "postgres", url: "mysql://u:s3cret@h/db" }, {}, /not a postgres:\/\/ URL \(mysql:\/\/\)/],
      [{ backend: "postgres", url: "nonsense" }, {}, /not a URL/],
      [undefined, { OCPOOL_STATE_URL: "http://u:s3cret@h/" }, /OCPOOL_STATE_URL .* invalid/],
      [{ backend: "postgres", url: 5 }, {}, /state\.url must be a string/]
    ]
    for (const [option, env, warning] of cases) {
      const got = parseStateBackend(option, env)
      expect(got.state).toEqual({ backend: "sqlite" })
      expect(got.warnings.some((w) => warning.test(w))).toBe(true)
      expect(got.warnings.join("\n")).not.toContain("s3cret")
    }
    const schema = parseStateBackend({ backend: "postgres", url: URL_A, schema: "Bad-Name", leaseMs: 5 }, {})
    expect(schema.state).toMatchObject({ backend: "postgres", schema: DEFAULT_SCHEMA, leaseMs: FLEET_LEASE_MS })
    expect(schema.warnings).toHaveLength(2)
  })

  it("US-52 the settings carry the backend and its warnings", () => {
    const { settings, warnings } = parseSettings({ state: { backend: "postgres", url: URL_A } }, {})
    expect(settings.state).toMatchObject({ backend: "postgres", url: URL_A })
    expect(warnings).toEqual([])
    expect(parseSettings({}, {}).settings.state).toEqual({ backend: "sqlite" })
  })

  it("US-52 maskUrl hides the password (user info and query) and keeps the rest; it never throws", () => {
    expect(maskUrl(URL_A)).toBe("postgres://pool:***@db.example.com:5432/ocpool?sslmode=require")
    expect(maskUrl("postgres://pool@h/db")).toBe("postgres://pool@h/db")
    expect(maskUrl("postgres://h/db?password=s3cret")).toBe("postgres://h/db?password=***")
    expect(maskUrl("postgres://u:p%40ss@h/db")).toBe("postgres://u:***@h/db")
    expect(maskUrl("not a url s3cret")).toBe("(not a URL)")
    fc.assert(
      fc.property(fc.string({ minLength: 1 }).filter((p) => !/[@/:?#\s%]/.test(p) && !"***".includes(p)), fc.string(), (password, junk) => {
        const masked = maskUrl(`postgres://user:${encodeURIComponent(password)}@host:5432/db${junk}`)
        return !masked.includes(`:${encodeURIComponent(password)}@`)
      })
    )
  })

  it("US-52 maskUrl hides the password whatever the URL's shape: no //, no scheme, an @ or / in the password, a secret query value (issue 33)", () => {
    expect(maskUrl("postgres:pool:S3cret@db.example.com/ocpool")).toBe("postgres:***@db.example.com/ocpool")
    expect(maskUrl("pool:S3cret@db.example.com:5432/ocpool")).toBe("pool:***@db.example.com:5432/ocpool")
    expect(maskUrl("postgres://pool:S3c@r/et@db.example.com/ocpool")).toBe("postgres://pool:***@db.example.com/ocpool")
    expect(maskUrl("postgres://h/db?sslmode=require&sslpassword=S3cret")).toBe("postgres://h/db?sslmode=require&sslpassword=***")
    expect(maskUrl("S3cret")).toBe("(not a URL)")
    // a password that starts with // makes `user:pw@host` look like `scheme://…`
    expect(maskUrl("pool://S3cret@db.example.com/ocpool")).toBe("pool:***@db.example.com/ocpool")
    expect(secretsOf("postgres:pool:S3cret@h/db?token=T0ken")).toEqual(["pool:S3cret", "S3cret", "T0ken"])
    const password = fc.stringMatching(/^[A-Z0-9!$%^&*()=+@/:?#]{6,20}$/).filter((p) => !p.includes("***"))
    const shape = fc.constantFrom("postgres://pool:PW@db.example.com:5432/ocpool", "postgres:pool:PW@db.example.com/ocpool", "pool:PW@db.example.com/ocpool", "postgresql://pool:PW@db/x?sslmode=require", "postgres://db/x?password=PW", "postgres://pool:PW@")
    fc.assert(
      fc.property(password, shape, (pw, s) => {
        // a query value cannot hold & # = unencoded (they would end it): those shapes take the others
        if (s.includes("?password=") && /[&#=]/.test(pw)) return true
        const url = s.replace("PW", () => pw)
        const masked = maskUrl(url)
        return !masked.includes(pw) && secretsOf(url).includes(pw)
      }),
      { numRuns: 3_000 }
    )
  })

  it("US-52 checkUrl accepts postgres:// and postgresql:// with a host (or a host= parameter)", () => {
    expect(checkUrl(URL_A)).toBeUndefined()
    expect(checkUrl("postgresql://h/db")).toBeUndefined()
    expect(checkUrl("postgres:///db?host=/var/run/postgresql")).toBeUndefined()
    expect(checkUrl("postgres:///db")).toBe("no host in the URL")
  })

  it("US-52 the host id is OCPOOL_HOST_ID (trimmed, at most 128 characters), else the hostname", () => {
    expect(hostIdOf({}, "box")).toBe("box")
    expect(hostIdOf({ OCPOOL_HOST_ID: "  ci-runner-3 " }, "box")).toBe("ci-runner-3")
    expect(hostIdOf({ OCPOOL_HOST_ID: " " }, "box")).toBe("box")
    expect(hostIdOf({ OCPOOL_HOST_ID: "x".repeat(200) }, "box")).toHaveLength(128)
  })
})
