/**
 * Issue 19: every real provider payload in test/fixtures/provider-errors/ classifies, scopes and times
 * as its case expects, through the same decision the plugin and `ocpool replay` use.
 */
import { describe, expect, it } from "@effect/vitest"
import { decideLimit, decideRetry, providerOf } from "../../../src/core/pool/cooldown.js"
import type { Slot } from "../../../src/core/pool/pool.js"
import { loadCorpus, opencodeErrorText, rawBodyOf, retryMessage, type CorpusCase } from "../../support/providerCorpus.js"

const corpus = loadCorpus()
const cases = corpus.flatMap((f) => f.cases.map((c) => [`${f.provider}/${c.id}`, c] as const))

const slot = (model: string, index: number): Slot => ({ model, provider: providerOf(model), weight: 1, index })

/** The case's model, a second model of its provider (a `:free` one when the case's model is free), and one elsewhere. */
const slotsFor = (c: CorpusCase): ReadonlyArray<Slot> => {
  const p = providerOf(c.model)
  const free = c.model.endsWith(":free")
  return [slot(c.model, 1), slot(`${p}/other-model${free ? ":free" : ""}`, 2), slot(`${p}/paid-model`, 3), slot("elsewhere/x", 4)]
}

const expectedModels = (c: CorpusCase, slots: ReadonlyArray<Slot>): ReadonlyArray<string> => {
  const p = providerOf(c.model)
  switch (c.expect.scope) {
    case "provider":
      return slots.filter((s) => s.provider === p).map((s) => s.model)
    case "free":
      return slots.filter((s) => s.provider === p && (s.model.endsWith(":free") || s.model === c.model)).map((s) => s.model)
    case "upstream":
      // the case's model routes to the relayed upstream; `other-model` and `paid-model` route nowhere known (issue 35)
      return [c.model]
    default:
      return [c.model]
  }
}

const judge = (c: CorpusCase) => {
  const slots = slotsFor(c)
  const now = Date.parse(c.now)
  const d = decideLimit(slots, new Map(), { text: opencodeErrorText(c), status: c.status ?? undefined, headers: c.status === null ? undefined : c.headers, model: c.model }, now)
  return { slots, now, d }
}

describe("issue 19: the corpus of real provider payloads", () => {
  it("US-44 the corpus has at least 60 payloads from at least 12 providers, each with its source URL and a reason", () => {
    expect(cases.length).toBeGreaterThanOrEqual(60)
    expect(new Set(corpus.map((f) => f.provider)).size).toBeGreaterThanOrEqual(12)
    for (const [, c] of cases) {
      expect(c.source).toMatch(/^https:\/\//)
      expect(c.expect.why.length).toBeGreaterThan(10)
    }
    expect(new Set(cases.map(([id]) => id)).size).toBe(cases.length)
  })

  it.each(cases)("US-44 %s classifies, scopes and times as published", (_id, c) => {
    const { d, slots } = judge(c)
    const want = c.expect
    const timed = want.class === "rate_limit" || want.class === "quota"
    const got =
      d._tag === "Ignore"
        ? { class: d.reason === "context_limit" ? "context_limit" : "none" }
        : {
            class: d.cls,
            models: d.plan.models,
            credit: d.credit,
            ...(timed ? { window: want.resetMs === null ? d.plan.source : Math.abs(d.plan.windowMs - want.resetMs) <= 1_000 ? "as stated" : `${d.plan.windowMs} ms (${d.plan.source})` } : {}),
            rule: d.rule
          }
    const expected =
      want.class === "none" || want.class === "context_limit"
        ? { class: want.class }
        : {
            class: want.class,
            models: expectedModels(c, slots),
            credit: want.credit === true,
            ...(timed ? { window: want.resetMs === null ? (d._tag === "Cool" && d.plan.source === "day" ? "day" : "backoff") : "as stated" } : {}),
            rule: d._tag === "Cool" ? d.rule : undefined
          }
    expect(got, `${want.why}`).toEqual(expected)
  })

  it.each(cases.filter(([, c]) => c.status !== null && (c.status === 429 || c.status >= 500) && c.expect.class !== "none" && c.expect.class !== "context_limit"))(
    "US-42 %s: a pooled retry that carries the failed response decides like the error itself",
    (_id, c) => {
      const { d: fromError, now, slots } = judge(c)
      const d = decideRetry(slots, new Map(), { message: retryMessage(c), next: now + 2_000, model: c.model, pooled: true, status: c.status ?? undefined, headers: c.headers, body: rawBodyOf(c.body) }, now)
      if (fromError._tag === "Cool" && fromError.cls !== "outage") {
        expect(d._tag).toBe("Cool")
        if (d._tag === "Cool") {
          expect(d.cls).toBe(fromError.cls)
          expect(d.plan.models).toEqual(fromError.plan.models)
          expect(d.plan.until).toBe(fromError.plan.until)
        }
      }
    }
  )
})
