/** Output lines (TRACE.md §3): compact JSON, `at` and `type` first, then the fields in the listed order. */
import type { Decision } from "./machine.js"
import { PAUSE_AFTER_MS, type PermitDecision } from "../permits/types.js"
import { isoTime as iso, tenthSeconds as seconds } from "../time.js"
import type { ContextDecision } from "../context/refresh.js"
import { moreLine } from "../context/prompt.js"

export const formatDecision = (d: Decision): string => {
  switch (d.type) {
    case "route":
      return JSON.stringify({ at: d.at, type: d.type, claim: d.claim, base: d.base, slot: d.slot, model: d.model, agent: d.agent, pass: d.pass })
    case "refuse":
      return JSON.stringify({ at: d.at, type: d.type, claim: d.claim, requested: d.requested, base: d.base })
    case "cool":
      return JSON.stringify({ at: d.at, type: d.type, models: d.models, scope: d.scope, reason: d.reason, until: d.until, strike: d.strike })
    case "ignore":
      return JSON.stringify({ at: d.at, type: d.type, reason: d.reason })
    case "abort":
      return JSON.stringify({ at: d.at, type: d.type, claim: d.claim, session: d.session, ok: d.ok })
    case "release":
      return JSON.stringify({ at: d.at, type: d.type, claim: d.claim, cooled: d.cooled, reason: d.reason })
    case "status":
      return JSON.stringify({ at: d.at, type: d.type, next: d.next, slots: d.slots, reaped: d.reaped })
    case "switch":
      return JSON.stringify({ at: d.at, type: d.type, session: d.session, from: d.from, to: d.to, via: d.via, until: d.until })
    case "model":
      return JSON.stringify({ at: d.at, type: d.type, session: d.session, requested: d.requested, model: d.model })
    case "budget": {
      const r = d.record
      const q = d.quota
      return JSON.stringify({
        at: d.at,
        type: d.type,
        group: r.group,
        minute: r.minute.used,
        day: r.day.used,
        limits: r.limits.map((l) => ({ window: l.window, limit: l.limit, samples: l.samples })),
        ...(q === undefined ? {} : { remaining: q.remaining, window: q.window, resetAt: q.resetAt }),
        ...(d.learned ? { learned: true } : {})
      })
    }
    case "permit":
      return formatPermit(d)
    case "context_start":
    case "context_skip":
    case "context_done":
      return formatContext(d)
  }
}

/** A context map decision, in its field order (docs/TRACE-FORMAT.md "Context map lines"); optional fields only when set. */
const formatContext = (d: ContextDecision): string => {
  switch (d.type) {
    case "context_start":
      return JSON.stringify({ at: d.at, type: d.type, run: d.run, kind: d.kind, claim: d.claim, paths: d.paths, more: d.more, condense: d.condense, requested: d.requested })
    case "context_skip":
      return JSON.stringify({ at: d.at, type: d.type, reason: d.reason, pending: d.pending, ...(d.run === undefined ? {} : { run: d.run }), ...(d.until === undefined ? {} : { until: d.until }) })
    case "context_done":
      return JSON.stringify({ at: d.at, type: d.type, run: d.run, outcome: d.outcome, requeued: d.requeued, ...(d.reason === undefined ? {} : { reason: d.reason }) })
  }
}

const pathCount = (n: number): string => `${n} ${n === 1 ? "path" : "paths"}`

/** One sentence per context map decision. */
const explainContext = (d: ContextDecision): string => {
  switch (d.type) {
    case "context_start": {
      const listed = d.paths.length === 0 ? "no path listed" : `${pathCount(d.paths.length)} listed${d.more > 0 ? ` (${moreLine(d.more)})` : ""}`
      const why = d.requested ? "a refresh was asked for" : "a root session went idle with edits pending and no run in flight"
      return `context map: ${d.kind === "bootstrap" ? "bootstrap (no map yet)" : "update"} ${d.run} starts on claim ${d.claim} because ${why}; ${listed}${d.condense ? "; the map is over its budget, so it is asked to condense" : ""}.`
    }
    case "context_skip":
      return d.reason === "in_flight"
        ? `context map: no run starts, ${d.run ?? "a run"} is still in flight; ${pathCount(d.pending)} wait.`
        : `context map: no run starts before ${iso(d.until ?? d.at)} (runs are at least 10 minutes apart); ${pathCount(d.pending)} wait.`
    case "context_done":
      return d.outcome === "failed"
        ? `context map: ${d.run} failed${d.reason === undefined ? "" : ` (${d.reason})`}; its ${pathCount(d.requeued)} ${d.requeued === 1 ? "goes" : "go"} back in the queue.`
        : d.outcome === "unchanged"
          ? `context map: ${d.run} ended without changing any map file.`
          : `context map: ${d.run} updated the map.`
  }
}

/** A permit decision: `at`, `type`, `act`, `id`, `budget`, then the act's own fields. */
const formatPermit = (d: PermitDecision): string => {
  switch (d.act) {
    case "queue":
      return JSON.stringify({ at: d.at, type: d.type, act: d.act, id: d.id, budget: d.budget, weight: d.weight, position: d.position })
    case "grant":
      return JSON.stringify({ at: d.at, type: d.type, act: d.act, id: d.id, budget: d.budget, weight: d.weight, waitedMs: d.waitedMs, before: d.before })
    case "release":
    case "cancel":
      return JSON.stringify({ at: d.at, type: d.type, act: d.act, id: d.id, budget: d.budget, weight: d.weight, cause: d.cause })
    case "pause":
    case "resume":
      return JSON.stringify({ at: d.at, type: d.type, act: d.act, id: d.id, budget: d.budget })
    case "refuse":
      return JSON.stringify({ at: d.at, type: d.type, act: d.act, id: d.id, budget: d.budget, reason: d.reason })
  }
}

/** One human sentence per decision (`ocpool replay --explain`). */
export const explainDecision = (d: Decision): string => {
  switch (d.type) {
    case "route": {
      const usable = d.cooling.map((c, i) => (c ? `slot ${i + 1} cooling` : undefined)).filter((x) => x !== undefined)
      const compared = `loads [${d.loads.join(",")}] against weights [${d.weights.join(",")}]`
      const why =
        d.pass === "first"
          ? `the first usable slot below its weight`
          : d.pass === "second"
            ? `every usable slot is at its weight, and this is the first below twice its weight`
            : d.cooling.every((c) => c)
              ? `every slot is cooling, so the least-loaded slot takes it (ties to the lowest index)`
              : `every usable slot is at twice its weight, so the least-loaded usable slot takes it (ties to the lowest index)`
      return `${d.claim}: ${d.base} -> ${d.agent} (${d.model}), slot ${d.slot} in the ${d.pass} pass: ${why}; ${compared}${usable.length > 0 ? `; ${usable.join(", ")}` : ""}.`
    }
    case "refuse":
      return `${d.claim}: refused ${d.requested}, a slot variant named by hand; spawn ${d.base} instead.`
    case "cool":
      return `${d.models.join(", ")} ${d.models.length > 1 ? "cool" : "cools"} (${d.scope} scope) for ${d.reason}${d.strike > 0 ? ` at strike ${d.strike}` : ""}: this signal asks until ${iso(d.until)} (${seconds(d.until - d.at)}).`
    case "ignore":
      return d.reason === "context_limit"
        ? `ignored: a context-limit error is the prompt's problem, not the model's; nothing cools.`
        : `ignored: not a limit, or nothing it could be attributed to.`
    case "abort":
      return `${d.claim}: abort of session ${d.session} ${d.ok ? "succeeded" : "failed"}.`
    case "release":
      return `${d.claim}: released (${d.reason})${d.cooled ? "; its model is cooling" : ""}.`
    case "switch":
      return `${d.session}: ${d.from} ran out (cooling until ${iso(d.until)}), so the session continues on ${d.to} (${d.via === "abort" ? "its retries aborted first" : d.via === "idle" ? "once it is idle" : "before its next request"}).`
    case "model":
      return `${d.session}: a message asking for ${d.requested} runs on ${d.model} while ${d.requested} cools.`
    case "budget": {
      const q = d.quota
      const counted = `${d.record.group}: ${d.record.minute.used} request(s) this minute, ${d.record.day.used} today`
      if (q === undefined) return `${counted}; no budget learned.`
      const sure = q.samples === 1 ? "seen once" : `seen ${q.samples} times`
      return `${counted}${d.learned ? "; a 429 taught" : ";"} a learned budget of ${q.limit} a ${q.window} (${sure}), ${q.remaining} left until ${iso(q.resetAt)}.`
    }
    case "status":
      return `status: next is slot ${d.next.slot} (${d.next.model}) in the ${d.next.pass} pass; loads [${d.slots.map((s) => `${s.load}/${s.cap}`).join(", ")}]; ${d.reaped} reaped.`
    case "permit":
      return explainPermit(d)
    case "context_start":
    case "context_skip":
    case "context_done":
      return explainContext(d)
  }
}

const units = (weight: number, budget: string): string => `${weight} ${weight === 1 ? "unit" : "units"} of ${budget}`

const CAUSES: Readonly<Record<string, string>> = {
  released: "its holder released it",
  "holder gone": "its holder is gone (process dead, pid reused, or lease expired)",
  "requester gone": "its requester is gone (process dead, pid reused, or lease expired)",
  forced: "freed by hand with --force",
  aborted: "its session was aborted",
  timeout: "its command ran out of time",
  wait: "its requester stopped waiting",
  error: "its requester failed",
  dispose: "its requester shut down"
}

/** One sentence per permit decision. */
const explainPermit = (d: PermitDecision): string => {
  switch (d.act) {
    case "queue":
      return `permit ${d.id}: ${units(d.weight, d.budget)} asked for; queued at position ${d.position} (first in, first out: it waits for every request before it).`
    case "grant":
      return `permit ${d.id}: granted ${units(d.weight, d.budget)} after waiting ${seconds(d.waitedMs)}; ${d.before} ${d.before === 1 ? "request was" : "requests were"} ahead of it.`
    case "release":
      return `permit ${d.id}: ${units(d.weight, d.budget)} returned: ${CAUSES[d.cause] ?? d.cause}.`
    case "cancel":
      return `permit ${d.id}: the request for ${units(d.weight, d.budget)} is cancelled: ${CAUSES[d.cause] ?? d.cause}.`
    case "pause":
      return `permit ${d.id}: paused: its client has not asked for more than ${PAUSE_AFTER_MS / 1000}s at the head of the ${d.budget} queue, so the requests behind it are served until it asks again.`
    case "resume":
      return `permit ${d.id}: resumed: its client asked again, and it takes its place in the ${d.budget} queue.`
    case "refuse":
      return `permit ${d.id}: refused (${d.reason}).`
  }
}
