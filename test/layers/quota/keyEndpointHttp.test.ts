/**
 * A provider's budget endpoint over HTTP (issue 35, US-48), against a fake of OpenRouter's
 * `GET /api/v1/key` on a loopback server: the key as a bearer token, the answer read, and each failure
 * typed (a malformed answer, a 401, a timeout, a refused connection), none carrying the key.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { DAY_MS } from "../../../src/core/constants.js"
import { KEY_ENDPOINTS, type KeyEndpoint as Endpoint } from "../../../src/core/quota/keyEndpoints.js"
import { KEY_ANSWER_MAX_BYTES, KeyEndpointHttp } from "../../../src/layers/quota/KeyEndpointHttp.js"
import { failureOf, KeyEndpoint } from "../../../src/services/quota/KeyEndpoint.js"

const KEY = "sk-or-v1-secret-never-shown"
const OPENROUTER = KEY_ENDPOINTS.find((e) => e.provider === "openrouter")!

interface Fake {
  readonly endpoint: Endpoint
  readonly seen: Array<{ readonly method: string | undefined; readonly path: string | undefined; readonly auth: string | undefined }>
  readonly close: Effect.Effect<void>
}

/** OpenRouter's key endpoint faked on 127.0.0.1: `answer` writes each response (or none: it hangs). */
const fake = (answer: (req: IncomingMessage, res: ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<Fake> => {
      const seen: Fake["seen"] = []
      const server = createServer((req, res) => {
        seen.push({ method: req.method, path: req.url, auth: req.headers.authorization })
        answer(req, res)
      })
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
      const { port } = server.address() as AddressInfo
      const close = Effect.promise(
        () =>
          new Promise<void>((r) => {
            server.closeAllConnections()
            server.close(() => r())
          })
      )
      return { endpoint: { ...OPENROUTER, url: `http://127.0.0.1:${port}/api/v1/key` }, seen, close }
    }),
    (f) => f.close
  )

const json = (status: number, body: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(typeof body === "string" ? body : JSON.stringify(body))
}

const read = (f: Fake, timeoutMs?: number) => Effect.either(Effect.flatMap(KeyEndpoint, (k) => k.read(f.endpoint, KEY))).pipe(Effect.provide(KeyEndpointHttp(timeoutMs)))

/** Whatever a failure renders as, it never shows the key. */
const keyless = (e: unknown) => {
  expect(JSON.stringify(e)).not.toContain(KEY)
  expect(String(e)).not.toContain(KEY)
}

describe("OpenRouter's key endpoint over HTTP (US-48)", () => {
  it.live("US-48 a GET with the key as a bearer token; the :free budget is read, its reset the next 00:00 UTC", () =>
    Effect.gen(function* () {
      const f = yield* fake(json(200, { data: { label: "sk-or-v1-abc...xyz", limit: null, usage: 0.5, is_free_tier: false, free_model_daily_requests: { limit: 1000, remaining: 998, used: 2 } } }))
      const before = Date.now()
      const got = yield* read(f)
      expect(f.seen).toEqual([{ method: "GET", path: "/api/v1/key", auth: `Bearer ${KEY}` }])
      expect(Either.isRight(got)).toBe(true)
      if (Either.isLeft(got)) return
      expect(got.right).toMatchObject({ _tag: "Budget", budget: { remaining: 998, limit: 1000 } })
      if (got.right._tag !== "Budget") return
      expect(got.right.budget.resetAt % DAY_MS).toBe(0)
      expect(got.right.budget.resetAt).toBeGreaterThan(before)
      expect(got.right.budget.resetAt - before).toBeLessThanOrEqual(DAY_MS)
    }).pipe(Effect.scoped)
  )

  it.live("US-48 a key without a :free budget reads as none", () =>
    Effect.gen(function* () {
      const f = yield* fake(json(200, { data: { label: "x", limit: 10, usage: 1, free_model_daily_requests: null } }))
      expect(yield* read(f)).toEqual(Either.right({ _tag: "NoBudget" }))
    }).pipe(Effect.scoped)
  )

  it.live("US-48 a malformed answer (not JSON, wrong fields, too long) is KeyAnswerMalformed with the reason", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["<html>502 Bad Gateway</html>", "not JSON"],
        [JSON.stringify({ data: { free_model_daily_requests: { limit: "fifty", remaining: 3 } } }), "free_model_daily_requests:"],
        [JSON.stringify({ error: { message: "nope" } }), "no data object"],
        ["[".repeat(100) + "]".repeat(100), "nested too deeply"],
        [JSON.stringify({ data: { pad: "x".repeat(KEY_ANSWER_MAX_BYTES) } }), `longer than ${KEY_ANSWER_MAX_BYTES} bytes`]
      ]
      for (const [body, reason] of cases) {
        const f = yield* fake(json(200, body))
        const got = yield* read(f)
        expect(Either.isLeft(got)).toBe(true)
        if (Either.isRight(got)) continue
        expect(got.left._tag).toBe("KeyAnswerMalformed")
        expect(failureOf(got.left)).toMatchObject({ kind: "malformed" })
        expect(failureOf(got.left).reason).toContain(reason)
        keyless(got.left)
      }
    }).pipe(Effect.scoped)
  )

  it.live("US-48 a 401 is KeyReadRefused with its status: the key was refused (and the key is not in it)", () =>
    Effect.gen(function* () {
      const f = yield* fake(json(401, { error: { code: 401, message: "No auth credentials found" }, user_id: null }))
      const got = yield* read(f)
      expect(Either.isLeft(got) && got.left).toMatchObject({ _tag: "KeyReadRefused", provider: "openrouter", status: 401 })
      if (Either.isLeft(got)) {
        expect(failureOf(got.left)).toEqual({ kind: "status 401", reason: "HTTP 401: the key was refused" })
        keyless(got.left)
      }
      const busy = yield* fake(json(503, "unavailable"))
      const down = yield* read(busy)
      expect(Either.isLeft(down) && failureOf(down.left)).toEqual({ kind: "status 503", reason: "HTTP 503" })
    }).pipe(Effect.scoped)
  )

  it.live("US-48 an endpoint that never answers is KeyReadTimeout after the timeout, the request aborted", () =>
    Effect.gen(function* () {
      const f = yield* fake(() => undefined)
      const started = Date.now()
      const got = yield* read(f, 300)
      const took = Date.now() - started
      expect(Either.isLeft(got) && got.left).toMatchObject({ _tag: "KeyReadTimeout", provider: "openrouter", ms: 300 })
      if (Either.isLeft(got)) keyless(got.left)
      expect(took).toBeGreaterThanOrEqual(290)
      expect(took).toBeLessThan(3_000)
      // a body that starts and never ends times out too
      const slow = yield* fake((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.write('{"data":')
      })
      const half = yield* read(slow, 300)
      expect(Either.isLeft(half) && half.left._tag).toBe("KeyReadTimeout")
    }).pipe(Effect.scoped)
  )

  it.live("US-48 a connection refused is KeyReadUnreachable with the system's reason", () =>
    Effect.gen(function* () {
      const f = yield* fake(json(200, {}))
      yield* f.close
      const got = yield* read(f)
      expect(Either.isLeft(got) && got.left._tag).toBe("KeyReadUnreachable")
      if (Either.isLeft(got)) {
        expect(failureOf(got.left).kind).toBe("unreachable")
        expect(failureOf(got.left).reason).toMatch(/ECONNREFUSED|fetch failed/)
        keyless(got.left)
      }
    }).pipe(Effect.scoped)
  )
})
