/** The status view's `fleet` section (issue 22): the hosts of a PostgreSQL fleet, or the line saying the server did not answer. */
import { describe, expect, it } from "@effect/vitest"
import type { Slot } from "../../src/core/pool/pool.js"
import { fleetEntry, renderStatus, statusView, type FleetFacts } from "../../src/core/status.js"
import { T0 } from "../helpers.js"

const NOW = T0
const slots: ReadonlyArray<Slot> = [{ index: 1, model: "zen/a", provider: "zen", weight: 1 }]
const URL_SHOWN = "postgres://ocpool:***@db.example.com:5432/ocpool?sslmode=require"

const fleet: FleetFacts = {
  _tag: "Fleet",
  view: {
    url: URL_SHOWN,
    schema: "ocpool",
    host: "host-a",
    roundTripMs: 1.234,
    schemaVersion: 1,
    hosts: [
      { host: "host-x", processes: 2, live: 0, leaseUntil: NOW - 40_000, fallbacks: 4, claims: 3, permits: 1 },
      { host: "host-a", processes: 2, live: 1, leaseUntil: NOW + 25_000, claims: 1, permits: 0 }
    ]
  },
  fallbacks: 0
}

const view = (f?: FleetFacts) => statusView({ origin: "pool.txt", slots, processes: [], cooldowns: new Map(), now: NOW, warnings: [], ...(f === undefined ? {} : { fleet: f }) })

describe("the status view in fleet mode", () => {
  it("US-52 without fleet facts (the file backend) there is no fleet key and no fleet line", () => {
    const v = view()
    expect("fleet" in v).toBe(false)
    expect(renderStatus(v, { now: NOW, processes: [] })).not.toContain("fleet")
  })

  it("US-52 the JSON lists every host sorted, live or not, this host marked, its fallbacks, the round trip to 0.1 ms", () => {
    expect(view(fleet).fleet).toEqual({
      backend: "postgres",
      reachable: true,
      url: URL_SHOWN,
      schema: "ocpool",
      host: "host-a",
      roundTripMs: 1.2,
      schemaVersion: 1,
      hosts: [
        { host: "host-a", live: true, self: true, processes: 2, liveProcesses: 1, leaseUntil: NOW + 25_000, claims: 1, permits: 0, fallbacks: 0 },
        { host: "host-x", live: false, self: false, processes: 2, liveProcesses: 0, leaseUntil: NOW - 40_000, claims: 3, permits: 1, fallbacks: 4 }
      ],
      fallbacks: 0
    })
  })

  it("US-52 the text names the backend with the URL masked, then one line per host: live with its lease, or lease expired with when", () => {
    const text = renderStatus(view(fleet), { now: NOW, processes: [] }).split("\n")
    const at = text.findIndex((l) => l.startsWith("fleet: "))
    expect(text.slice(at, at + 3)).toEqual([
      `fleet: postgres ${URL_SHOWN} schema ocpool, this host host-a, round trip 1.2 ms, schema version 1, 2 hosts`,
      "  host-a (this host)  live (1/2 processes), lease until 09:00:25Z  1 claim  0 permits",
      "  host-x  lease expired 08:59:20Z (40s ago)  3 claims  1 permit  4 decisions made on files (server away)"
    ])
    expect(text.some((l) => l.includes("of this process"))).toBe(false)
  })

  it("US-52 the decisions this process made on the state directory are counted when there are any", () => {
    const text = renderStatus(view({ ...fleet, fallbacks: 3 }), { now: NOW, processes: [] })
    expect(text).toContain("  3 decisions of this process made on the state directory (PostgreSQL did not answer)")
    expect(fleetEntry({ ...fleet, fallbacks: 3 }).fallbacks).toBe(3)
  })

  it("US-52 a server that does not answer is one line with the masked URL and the reason; the JSON says reachable false", () => {
    const down: FleetFacts = { _tag: "Unreachable", url: URL_SHOWN, schema: "ocpool", host: "host-a", reason: "connect ECONNREFUSED 127.0.0.1:1", fallbacks: 0 }
    const v = view(down)
    expect(v.fleet).toEqual({ backend: "postgres", reachable: false, url: URL_SHOWN, schema: "ocpool", host: "host-a", reason: "connect ECONNREFUSED 127.0.0.1:1", fallbacks: 0 })
    const lines = renderStatus(v, { now: NOW, processes: [] }).split("\n").filter((l) => l.startsWith("fleet"))
    expect(lines).toEqual([`fleet: server unreachable, showing this host (postgres ${URL_SHOWN} schema ocpool did not answer: connect ECONNREFUSED 127.0.0.1:1)`])
  })

  it("US-52 a host id with escape sequences reaches the terminal escaped", () => {
    const hostile: FleetFacts = { ...fleet, view: { ...fleet.view, hosts: [{ host: "evil\u001b[31m", processes: 1, live: 1, leaseUntil: NOW + 1_000, claims: 0, permits: 0 }] } }
    expect(renderStatus(view(hostile), { now: NOW, processes: [] })).not.toContain("\u001b")
  })
})
