/** `ocpool doctor`'s `state-backend` check (issue 22) and which backend the CLI reads (src/cli/shared/backend.ts). */
import { describe, expect, it } from "@effect/vitest"
import { backendCheck } from "../../src/cli/doctor/command.js"
import { cliBackend, fleetFacts, scrubPassword } from "../../src/cli/shared/backend.js"
import type { FleetAnswer } from "../../src/services/state/SharedState.js"
import { SCHEMA_VERSION } from "../../src/core/state/fleet.js"

const RAW = "postgres://team:s3cret-pw@db.example.com:5432/ocpool?sslmode=require"
const SHOWN = "postgres://team:***@db.example.com:5432/ocpool?sslmode=require"
const pg = cliBackend({ OCPOOL_STATE_URL: RAW })
const fleet = (schemaVersion: number): FleetAnswer => ({
  _tag: "Fleet",
  view: { url: SHOWN, schema: "ocpool", host: "host-a", roundTripMs: 0.84, schemaVersion, hosts: [{ host: "host-a", processes: 1, live: 1, leaseUntil: 0, fallbacks: 0, claims: 0, permits: 0 }] }
})

describe("the CLI's shared-state backend", () => {
  it("US-52 OCPOOL_STATE_URL selects PostgreSQL with the default schema; unset, the files; an invalid one is a warning with the URL masked", () => {
    expect(pg.state).toMatchObject({ backend: "postgres", url: RAW, schema: "ocpool", leaseMs: 30_000 })
    expect(cliBackend({})).toEqual({ state: { backend: "sqlite" }, warnings: [] })
    const bad = cliBackend({ OCPOOL_STATE_URL: "mysql://u:s3cret-pw@h/db" })
    expect(bad.state).toEqual({ backend: "sqlite" })
    expect(bad.warnings).toHaveLength(1)
    expect(bad.warnings[0]).toContain("OCPOOL_STATE_URL")
    expect(bad.warnings[0]).not.toContain("s3cret-pw")
  })

  it("US-52 doctor: the embedded backend is ok; PostgreSQL is ok with the masked URL, schema, round trip and schema version, never the password", () => {
    expect(backendCheck(cliBackend({}), undefined)).toEqual({ id: "state-backend", status: "ok", detail: "sqlite (state.db in the state directory)" })
    const ok = backendCheck(pg, fleetFacts(fleet(SCHEMA_VERSION), 0, RAW))
    expect(ok.status).toBe("ok")
    expect(ok.detail).toBe(`postgres ${SHOWN} schema ocpool; round trip 0.8 ms; schema version ${SCHEMA_VERSION} (expected ${SCHEMA_VERSION}); host host-a; 1 host on record, 1 live`)
    expect(JSON.stringify(ok)).not.toContain("s3cret-pw")
  })

  it("US-52 doctor: a schema migrated by a newer ocpool, a server that does not answer and an unusable URL are warnings", () => {
    const newer = backendCheck(pg, fleetFacts(fleet(SCHEMA_VERSION + 1), 0, RAW))
    expect(newer.status).toBe("warn")
    expect(newer.detail).toContain(`schema version ${SCHEMA_VERSION + 1} (expected ${SCHEMA_VERSION}): migrated by a newer ocpool`)
    // a reason that would quote the password is scrubbed all the same
    const down = backendCheck(pg, fleetFacts({ _tag: "Unreachable", url: SHOWN, schema: "ocpool", host: "host-a", reason: "connect ECONNREFUSED (tried s3cret-pw)" }, 0, RAW))
    expect(down).toEqual({
      id: "state-backend",
      status: "warn",
      detail: `postgres ${SHOWN} schema ocpool did not answer (connect ECONNREFUSED (tried ***)): the plugin decides on the state directory until it does`
    })
    const bad = backendCheck(cliBackend({ OCPOOL_STATE_URL: "http://u:s3cret-pw@h/" }), undefined)
    expect(bad.status).toBe("warn")
    expect(bad.detail).not.toContain("s3cret-pw")
  })

  it("US-52 the password is scrubbed as given and percent-decoded; text without it is unchanged", () => {
    const url = "postgres://u:p%40ss-w0rd@h/db"
    expect(scrubPassword("x p%40ss-w0rd y p@ss-w0rd z", url)).toBe("x *** y *** z")
    expect(scrubPassword("nothing here", url)).toBe("nothing here")
    expect(scrubPassword("nothing here", undefined)).toBe("nothing here")
  })
})
