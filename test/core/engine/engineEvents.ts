/**
 * Random engine worlds for property tests: a pool, then opencode events over a few root and child
 * sessions (spawns of pooled, hand-named and other bases; bindings; asks; busy and idle; requests
 * with bursts that spin; errors and retries of every class; failed responses; rate-limit headers;
 * coaching; fallback messages and switches; sweeps; abort outcomes), with the other processes'
 * claims and the shared cooldowns as the snapshot each event would read.
 */
import fc from "fast-check"
import type { Claim } from "../../../src/core/pool/claims.js"
import type { Cooldown } from "../../../src/core/pool/cooldown.js"
import type { PoolSnapshot } from "../../../src/core/engine/snapshot.js"
import type { EngineEvent } from "../../../src/core/engine/step.js"
import type { Slot } from "../../../src/core/pool/pool.js"

export const T0 = 1_796_115_600_000

const MODELS = ["zen/alpha", "zen/beta", "go/gamma", "or/delta"]
const ROOTS = ["r0", "r1"]
const CHILDREN = ["k0", "k1", "k2", "k3"]
const SESSIONS = [...ROOTS, ...CHILDREN, "stranger"]
const CALLS = ["c0", "c1", "c2"]
const CLAIMS = ROOTS.flatMap((r) => CALLS.map((c) => `${r}:${c}`))

const SLOTS: ReadonlyArray<Slot> = [
  { index: 1, provider: "zen", model: "zen/alpha", weight: 1 },
  { index: 2, provider: "zen", model: "zen/beta", weight: 1 },
  { index: 3, provider: "go", model: "go/gamma", weight: 2 }
]

const ERRORS: ReadonlyArray<unknown> = [
  { name: "APIError", data: { statusCode: 429, message: "Slow down", responseHeaders: { "retry-after": "120" } } },
  { name: "UnknownError", data: { message: '{"message":"limit reached"}' } },
  { name: "APIError", data: { statusCode: 503, message: "Service Unavailable" } },
  { name: "APIError", data: { statusCode: 401, message: "Invalid API key" } },
  { name: "APIError", data: { statusCode: 402, message: "Insufficient credits: add more to continue", metadata: { provider: "zen" } } },
  { name: "ProviderModelNotFoundError", data: { message: "Model not found" } },
  { name: "MessageAbortedError", data: { message: "aborted" } },
  "a plain string",
  null
]
const RETRIES = ["Rate limit exceeded", "Free usage exceeded, subscribe to Go", "Internal Server Error", "Service Unavailable", "insufficient balance"]
const HEADERS: ReadonlyArray<Readonly<Record<string, string>>> = [
  { "x-ratelimit-remaining-requests": "0", "x-ratelimit-limit-requests": "100", "x-ratelimit-reset-requests": "30s" },
  { "x-ratelimit-remaining-requests": "80", "x-ratelimit-limit-requests": "100" },
  { "anthropic-ratelimit-tokens-remaining": "10", "anthropic-ratelimit-tokens-limit": "100000" },
  { "x-ratelimit-remaining-tokens": "0" },
  { "retry-after": "20" },
  { "content-type": "text/event-stream" }
]

const opt = <A>(a: fc.Arbitrary<A>) => fc.option(a, { nil: undefined })
// the context map: a few map states, and run ids at the times worlds reach (any id works: a wrong one is ignored)
const MAP = fc.record({ exists: fc.boolean(), bytes: fc.constantFrom(100, 30_000), stamp: fc.constantFrom("a", "b") })
const RUNS = ["ctx-0", "ctx-x"]
// mostly children: they are what claims target
const session = fc.constantFrom(...CHILDREN, ...CHILDREN, ...SESSIONS)
const model = fc.constantFrom(...MODELS)

const event: fc.Arbitrary<EngineEvent> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ type: fc.constant("pool" as const), slots: fc.subarray([...SLOTS], { minLength: 1 }), origin: fc.constant("test"), warnings: fc.constantFrom([], ["a warning"]), fallbacks: opt(fc.subarray(MODELS)) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant("spawn" as const),
      owner: fc.constantFrom(...ROOTS),
      call: fc.constantFrom(...CALLS),
      base: fc.constantFrom("explore", "implement", "context", "explore-2", "general"),
      taskId: opt(fc.constantFrom(...CHILDREN, ""))
    })
  },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("taskEnd" as const), claim: fc.constantFrom(...CLAIMS), ok: fc.boolean() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant("child" as const),
      id: fc.constantFrom(...CHILDREN),
      parent: fc.constantFrom(...ROOTS, ...ROOTS, ...ROOTS, "k0"),
      agent: opt(fc.constantFrom("explore-1", "implement-2", "context-3", "build")),
      title: opt(fc.constantFrom("probe (@explore-2 subagent)", "plain title", "x (@build subagent)"))
    })
  },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("activity" as const), session }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("ask" as const), session, id: fc.constantFrom("q1", "q2") }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("answered" as const), session, id: fc.constantFrom("q1", "q2", "*") }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("busy" as const), session }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("idle" as const),
      session: fc.constantFrom(...SESSIONS, "ctxs"),
      context: opt(fc.record({ map: MAP, requested: fc.boolean() }))
    })
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("output" as const), session }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("request" as const), session, model: opt(model), agent: opt(fc.constantFrom("build", "title", "explore-1")) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("message" as const), session: fc.constantFrom(...ROOTS), model, agent: opt(fc.constantFrom("build", "plan")) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("switched" as const), session: fc.constantFrom(...ROOTS), to: model, ok: fc.boolean(), reason: fc.constant("busy") }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("error" as const), session, error: fc.constantFrom(...ERRORS), model: opt(model) }) },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant("retry" as const), session, message: fc.constantFrom(...RETRIES), next: fc.constantFrom(T0 + 3_000, T0 + 4 * 3_600_000), provider: opt(fc.constantFrom("zen", "go")) })
  },
  {
    weight: 1,
    arbitrary: fc.record({ type: fc.constant("failed" as const), session, status: fc.constantFrom(402, 429, 500), headers: fc.constantFrom({}, { "retry-after": "30" }), body: fc.constantFrom("", '{"error":"insufficient credits"}') })
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("sweep" as const) }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("aborted" as const), claim: fc.constantFrom(...CLAIMS), ok: fc.boolean(), reason: fc.constant("gone") }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("status" as const) }) },
  {
    weight: 3,
    arbitrary: fc.record({ type: fc.constant("response" as const), headers: fc.constantFrom(...HEADERS), model: opt(model), session: opt(session), reserve: fc.constantFrom(0.02, 0.1) })
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("coach" as const), session, model }) },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("contextLoad" as const),
      root: fc.constant("/p"),
      maxBytes: fc.constantFrom(10, 24_576),
      pending: fc.subarray(["src/a.ts", "src/b.ts", "lib/c.ts"]),
      dropped: fc.constant(0),
      lastStartedAt: opt(fc.constantFrom(T0 - 700_000, T0 + 60_000)),
      lastRun: fc.constant(undefined)
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant("contextEdit" as const),
      session: fc.constantFrom(...SESSIONS, "ctxs"),
      paths: fc.subarray(["/p/src/a.ts", "src/b.ts", "/p/.opencode/context/x.md", "/elsewhere/y.ts", "/p/node_modules/z.js", "/p/src/d.ts"], { minLength: 1 })
    })
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("contextBound" as const), run: fc.constantFrom(...RUNS), session: fc.constantFrom("ctxs", "r1") }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("contextEnd" as const), run: fc.constantFrom(...RUNS), map: MAP, reason: fc.constant("create failed") }) }
)

/** One event with the time before it; a burst is many requests of one session close together (it spins). */
export type Move = { readonly wait: number; readonly events: ReadonlyArray<EngineEvent> }

const move: fc.Arbitrary<Move> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ wait: fc.constantFrom(0, 1, 500, 5_000, 40_000, 200_000, 400_000, -1_000), events: event.map((e) => [e]) }) },
  { weight: 1, arbitrary: fc.record({ wait: fc.constant(100), events: fc.tuple(fc.constantFrom(...CHILDREN), fc.integer({ min: 18, max: 21 })).map(([s, n]) => Array.from({ length: n }, () => ({ type: "request" as const, session: s }))) }) }
)

const peerClaim = (key: string, model: string, at: number): Claim => ({
  key,
  base: "explore",
  slot: 1,
  model,
  ownerSession: "peer",
  targetSession: null,
  acquiredAt: at,
  heartbeatAt: at,
  abortAttempts: 0,
  abortPending: false,
  abortOrigin: null,
  abortInFlight: false,
  endedInFlight: false
})

/** What the other processes hold, relative to the time an event is stepped at. */
export type Shared = (at: number) => PoolSnapshot

const shared: fc.Arbitrary<Shared> = fc
  .record({
    peers: fc.array(fc.record({ model, age: fc.integer({ min: 0, max: 20 * 60_000 }) }), { maxLength: 4 }),
    cooling: fc.array(fc.record({ model, ends: fc.integer({ min: -60_000, max: 900_000 }), reason: fc.constantFrom("rate_limit" as const, "quota" as const, "outage" as const), strikes: fc.integer({ min: 0, max: 3 }) }), { maxLength: 3 })
  })
  .map(({ cooling, peers }) => (at: number) => ({
    peers: peers.length === 0 ? [] : [{ pid: 4242, host: "h", reaped: 0, claims: peers.map((p, i) => peerClaim(`peer:${i}`, p.model, at - p.age)) }],
    cooldowns: new Map<string, Cooldown>(cooling.map((c) => [c.model, { model: c.model, reason: c.reason, strikes: c.strikes, scope: "model", since: at - 1_000, until: at + c.ends, source: "flat" }]))
  }))

/** A pool event, then moves, with the shared state every step reads. */
export const world = fc.record({
  pool: fc.record({ slots: fc.subarray([...SLOTS], { minLength: 1 }), fallbacks: fc.subarray(MODELS) }),
  moves: fc.array(move, { minLength: 1, maxLength: 80, size: "max" }),
  shared
})

export type World = typeof world extends fc.Arbitrary<infer W> ? W : never

export const poolEvent = (w: World): EngineEvent => ({ type: "pool", slots: w.pool.slots, origin: "test", warnings: [], fallbacks: w.pool.fallbacks })
