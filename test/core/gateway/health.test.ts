/** What "healthy" means for the OmniRoute gateway (SPEC §13): `GET <baseURL>/models` answers 200 with at least one model, in time. */
import { describe, expect, it } from "@effect/vitest"
import { healthLine, healthOfBody, healthOfFailure, healthOfStatus, healthRequest, type GatewayHealth } from "../../../src/core/gateway/health.js"

const BASE = "http://127.0.0.1:20128/v1"

/** The verdict of one answer, as the shell reaches it: the status first, the body only of a 200. */
const verdict = (status: number, body: unknown): GatewayHealth => healthOfStatus(BASE, status) ?? healthOfBody(BASE, body)

const timeout = Object.assign(new Error("The operation was aborted due to timeout"), { name: "TimeoutError" })
const abort = Object.assign(new Error("This operation was aborted"), { name: "AbortError" })

describe("gateway health", () => {
  it("US-28 the probe asks the model list with the key as a bearer token", () => {
    expect(healthRequest(BASE, "sk-1")).toEqual({ url: `${BASE}/models`, headers: { authorization: "Bearer sk-1", accept: "application/json" } })
  })

  it.each<[string, number, unknown, GatewayHealth]>([
    ["200 with two models: healthy", 200, { object: "list", data: [{ id: "auto" }, { id: "fast" }] }, { _tag: "Healthy", models: ["auto", "fast"] }],
    ["200 with one model: healthy", 200, { data: [{ id: "auto" }] }, { _tag: "Healthy", models: ["auto"] }],
    ["200 with a repeated model: healthy, listed once", 200, { data: [{ id: "auto" }, { id: "auto" }] }, { _tag: "Healthy", models: ["auto"] }],
    ["200 with an empty list", 200, { data: [] }, { _tag: "Unhealthy", reason: `GET ${BASE}/models lists no models` }],
    ["200 with models without ids", 200, { data: [{ name: "auto" }, { id: " " }] }, { _tag: "Unhealthy", reason: `GET ${BASE}/models lists no models` }],
    ["200 that is not a model list", 200, ["auto"], { _tag: "Unhealthy", reason: `GET ${BASE}/models lists no models` }],
    ["200 with null", 200, null, { _tag: "Unhealthy", reason: `GET ${BASE}/models lists no models` }],
    ["201 with models", 201, { data: [{ id: "auto" }] }, { _tag: "Unhealthy", reason: `GET ${BASE}/models answered HTTP 201` }],
    ["204", 204, undefined, { _tag: "Unhealthy", reason: `GET ${BASE}/models answered HTTP 204` }],
    ["401", 401, { error: "bad key" }, { _tag: "Unhealthy", reason: `GET ${BASE}/models answered HTTP 401` }],
    ["500", 500, { data: [{ id: "auto" }] }, { _tag: "Unhealthy", reason: `GET ${BASE}/models answered HTTP 500` }]
  ])("US-28 an answer %s", (_name, status, body, health) => {
    expect(verdict(status, body)).toEqual(health)
  })

  it("US-28 the body of an answer that is not 200 is never asked for", () => {
    expect(healthOfStatus(BASE, 200)).toBeUndefined()
    for (const status of [199, 201, 301, 404, 503]) expect(healthOfStatus(BASE, status)?._tag).toBe("Unhealthy")
  })

  it.each<[string, unknown, string]>([
    ["a timeout", timeout, `no answer from ${BASE} within 2000 ms`],
    ["an abort", abort, `no answer from ${BASE} within 2000 ms`],
    ["a refused connection", new TypeError("fetch failed"), `${BASE} unreachable: fetch failed`],
    ["a body that is not JSON", new SyntaxError("Unexpected token < in JSON at position 0"), `${BASE} unreachable: Unexpected token < in JSON at position 0`],
    ["a thrown non-error", "boom", `${BASE} unreachable: boom`]
  ])("US-28 a probe that failed with %s is unhealthy", (_name, e, reason) => {
    expect(healthOfFailure(BASE, 2000, e)).toEqual({ _tag: "Unhealthy", reason })
  })

  it("US-28 the verdict's one line: info with the model count when healthy, a warning with the reason otherwise", () => {
    expect(healthLine(BASE, { _tag: "Healthy", models: ["auto", "fast"] })).toEqual({ level: "info", message: `omniroute registered: 2 model(s) at ${BASE}` })
    expect(healthLine(BASE, { _tag: "Unhealthy", reason: "x" })).toEqual({ level: "warn", message: "omniroute not registered: x" })
  })
})
