// Converts recorded opencode 1.18.33 hook calls (test/fixtures/opencode-1.18.33/hooks-excerpt.jsonl)
// into spawn traces (TRACE.md) under test/fixtures/traces/, following the recording rules of TRACE.md §4:
// task spawns of pooled bases, child binding by `info.agent`, activity sampled every 10 s, releases on
// tool.execute.after, retry statuses, session errors, duplicates of one signal within 30 s dropped.
//
// The recorded 429s and in-stream limits hit root sessions, and the recorded hang was stopped by the
// test driver after 1.7 s. The pooled-child versions add lines marked `"synthetic": true` (the spawn
// and bind that make the recorded session a pooled child, the pool line, later sweeps and spawns);
// every other line carries `"n"`, the recording line it came from. Replay ignores both fields.
//
//   node scripts/traces-from-hooks.mjs && for t in test/fixtures/traces/*[^s].jsonl; do \
//     bin/ocpool.js replay "$t" > "${t%.jsonl}.decisions.jsonl"; done
import { readFileSync, writeFileSync, mkdirSync } from "node:fs"

const here = new URL("../test/fixtures/", import.meta.url)
const hooks = readFileSync(new URL("opencode-1.18.33/hooks-excerpt.jsonl", here), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l))
mkdirSync(new URL("traces/", here), { recursive: true })

const POOLED = new Set(["explore", "implement", "context"])
const ACTIVITY_SAMPLE_MS = 10_000
const SIGNAL_DEDUPE_MS = 30_000
// The recording's config bound explore-1 and explore-2 to these models.
const POOL = { type: "pool", slots: [{ model: "fakeB/pool-b", weight: 1 }, { model: "fakeB/pool-c", weight: 1 }], synthetic: true }

/** Replays hook calls of the given sessions into trace lines, as the plugin's recorder writes them. */
function record(sessions, { synthetic = [], stopAt = Infinity, dropAborted = false } = {}) {
  const lines = []
  const claims = new Map() // claim -> { owner, variant, target }
  const lastActivity = new Map()
  const lastSignal = new Map()
  const keep = new Set(sessions)
  for (const h of hooks) {
    if (h.n > stopAt) break
    const at = h.t
    if (h.hook === "tool.execute.before" && keep.has(h.input.sessionID)) {
      const base = h.outputBefore.args.subagent_type
      if (!POOLED.has(base) && !/^(explore|implement|context)-[1-9][0-9]*$/.test(base)) continue
      const claim = `${h.input.sessionID}:${h.input.callID}`
      claims.set(claim, { owner: h.input.sessionID, variant: h.output.args.subagent_type, target: null })
      lines.push({ at, type: "spawn", claim, base, session: h.input.sessionID, n: h.n })
    } else if (h.hook === "tool.execute.after" && keep.has(h.input.sessionID)) {
      const claim = `${h.input.sessionID}:${h.input.callID}`
      if (claims.has(claim)) lines.push({ at, type: "release", claim, n: h.n })
    } else if (h.hook === "event") {
      const e = h.input.event
      const p = e.properties
      if (e.type === "session.created" && p.info.parentID && keep.has(p.info.parentID)) {
        for (const [claim, c] of claims) {
          if (c.owner === p.info.parentID && c.target === null && c.variant === p.info.agent) {
            c.target = p.info.id
            lastActivity.set(p.info.id, at)
            lines.push({ at, type: "bind", claim, session: p.info.id, n: h.n })
            break
          }
        }
      } else if ((e.type === "message.updated" || e.type === "message.part.updated") && keep.has(p.info?.sessionID ?? p.part?.sessionID)) {
        const session = p.info?.sessionID ?? p.part?.sessionID
        if (p.part?.type === "retry") continue
        if (e.type === "message.updated" && p.info.role === "assistant" && p.info.error) {
          if (dropAborted && p.info.error.name === "MessageAbortedError") continue
          pushSignal(lines, lastSignal, at, session, errorLine(at, session, p.info.error, `${p.info.providerID}/${p.info.modelID}`, h.n))
          continue
        }
        const last = lastActivity.get(session)
        if (last === undefined || at - last >= ACTIVITY_SAMPLE_MS) {
          lastActivity.set(session, at)
          lines.push({ at, type: "activity", session, n: h.n })
        }
      } else if (e.type === "session.status" && p.status.type === "retry" && keep.has(p.sessionID)) {
        const line = { at, type: "retry", session: p.sessionID, message: p.status.message, next: p.status.next, n: h.n }
        if (typeof p.status.action?.provider === "string") line.provider = p.status.action.provider
        pushSignal(lines, lastSignal, at, p.sessionID, line)
      } else if (e.type === "session.error" && keep.has(p.sessionID)) {
        if (dropAborted && p.error?.name === "MessageAbortedError") continue
        pushSignal(lines, lastSignal, at, p.sessionID, errorLine(at, p.sessionID, p.error, undefined, h.n))
      }
    }
  }
  return merge(lines, synthetic)
}

function errorLine(at, session, error, model, n) {
  const line = { at, type: "limit", text: JSON.stringify(error) }
  if (typeof error?.data?.statusCode === "number") line.status = error.data.statusCode
  if (error?.data?.responseHeaders) line.headers = error.data.responseHeaders
  if (model) line.model = model
  if (typeof error?.data?.metadata?.provider === "string") line.provider = error.data.metadata.provider
  line.session = session
  line.n = n
  return line
}

function pushSignal(lines, lastSignal, at, session, line) {
  const text = line.text ?? line.message
  const key = `${session}\u0000${text}`
  const last = lastSignal.get(key)
  if (last !== undefined && at - last < SIGNAL_DEDUPE_MS) return
  lastSignal.set(key, at)
  lines.push(line)
}

/** Synthetic lines go in by `at` (after recorded lines with the same `at`). */
function merge(recorded, synthetic) {
  const all = [...recorded.map((l, i) => ({ l, k: 0, i })), ...synthetic.map((l, i) => ({ l: { ...l, synthetic: true }, k: 1, i }))]
  all.sort((a, b) => a.l.at - b.l.at || a.k - b.k || a.i - b.i)
  return all.map((x) => x.l)
}

function write(name, lines) {
  const first = lines[0].at
  const body = [{ ...POOL, at: first }, ...lines].map((l) => JSON.stringify(l)).join("\n") + "\n"
  writeFileSync(new URL(`traces/${name}.jsonl`, here), body)
  console.log(`${name}: ${lines.length + 1} lines`)
}

const first = (session) => hooks.find((h) => h.hook === "event" && h.input.event.type === "session.created" && h.input.event.properties.info.id === session)

// 1. Normal task spawns: one `task` call, then two parallel ones (all recorded).
write("task-spawn", record(["ses_dd4fc2cfcffebURUSrVTfuZ0LW", "ses_dd4fc2a54ffeXoWUUKyKMUPybO", "ses_dd4fc2c20ffeh2F63GAAiClLwe", "ses_dd4fc29afffejZvcHP3YM0xR2v", "ses_dd4fc2980ffeDxlv0UVYMoLZ1q"]))

// 2. A 429 with retries: recorded on a root session; made a pooled child by a synthetic spawn + bind.
{
  const s = "ses_dd4fc1628ffeVec1jNp8CqF8xN"
  const t = first(s).t
  write("retry-429", record([s], {
    synthetic: [
      { at: t - 5, type: "spawn", claim: "ses_parent:call_429", base: "explore", session: "ses_parent" },
      { at: t, type: "bind", claim: "ses_parent:call_429", session: s },
      { at: t + 2_000, type: "spawn", claim: "ses_parent:call_429b", base: "explore", session: "ses_parent" },
      { at: t + 6_000, type: "status" }
    ]
  }))
}

// 3. An in-stream `limit reached` (UnknownError wrapping {"message":"limit reached"}), made pooled.
{
  const s = "ses_dd4fbfeabffeO9FODnuEEMQNpb"
  const t = first(s).t
  write("limit-mid", record([s], {
    synthetic: [
      { at: t - 5, type: "spawn", claim: "ses_parent:call_mid", base: "explore", session: "ses_parent" },
      { at: t, type: "bind", claim: "ses_parent:call_mid", session: s },
      { at: t + 1_000, type: "spawn", claim: "ses_parent:call_mid2", base: "explore", session: "ses_parent" }
    ]
  }))
}

// 4. A hang: the recorded spawn and bind of a child whose provider never answers. The recording's
// driver aborted it after 1.7 s; here the reaper's sweeps do: at 4 min (too young), then past 5 min.
{
  const parent = "ses_dd4fbd424ffeD0Y1zL45IdkIx0"
  const child = "ses_dd4fbd394ffeyklOD3lklwhT3W"
  const spawn = hooks.find((h) => h.n === 1779)
  const t = spawn.t
  write("hang", record([parent, child], {
    stopAt: 1808, // the driver's abort and everything after it are not part of the pooled version
    synthetic: [
      { at: t + 240_000, type: "sweep" },
      { at: t + 301_000, type: "sweep" },
      { at: t + 302_000, type: "spawn", claim: `${parent}:call_retry`, base: "explore", session: parent },
      { at: t + 303_000, type: "status" }
    ]
  }))
}
