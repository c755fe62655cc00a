/**
 * The engine declares what each event needs of the shared state before stepping it (`needsOf`), and
 * never discovers it halfway: over random worlds (a pool, then every kind of opencode event, the other
 * processes' claims and the shared cooldowns), an event declared as needing nothing steps without a
 * snapshot and decides exactly what it decides with one; a declared read writes nothing shared; a
 * declaration without peers does not depend on them. The lines the engine applies replay, through the
 * machine `ocpool replay` runs, to the decisions it took.
 */
import { describe, expect, it } from "@effect/vitest"
import type { PoolSnapshot } from "../../../src/core/engine/snapshot.js"
import { initialEngineState, type EngineState } from "../../../src/core/engine/state.js"
import { engineStep, needsOf, type Applied, type EngineEvent, type StepOutcome } from "../../../src/core/engine/step.js"
import { formatDecision } from "../../../src/core/trace/format.js"
import { replayText } from "../../../src/core/trace/replay.js"
import { poolEvent, T0, world, type World } from "./engineEvents.js"

/** Everything an outcome says, comparable: maps and sets as entries; the claim table by its claims. */
const comparable = (o: StepOutcome): string =>
  JSON.stringify(
    o._tag === "NeedSnapshot"
      ? o
      : {
          // every field of the answer, the lazy ones (logs, commit) read
          ...{ _tag: o._tag, lines: o.lines, decisions: o.decisions, logs: o.logs, observed: o.observed, effects: o.effects, commit: o.commit },
          state: { ...o.state, machine: { claims: o.state.machine.claims, cooldowns: o.state.machine.cooldowns, reaped: o.state.machine.reaped, episodes: o.state.machine.episodes } }
        },
    (_k, v: unknown) =>
    v instanceof Map ? [...v.entries()] : v instanceof Set ? [...v] : v
  )

const applied = (o: StepOutcome): Applied => {
  if (o._tag !== "Applied") throw new Error("a snapshot was given, yet the step asked for one")
  return o
}

/** Each event of a world, with the state before it and the time it is stepped at, stepped as the shell steps it. */
const walk = (w: World, visit: (state: EngineState, event: EngineEvent, at: number, snapshot: PoolSnapshot) => Applied): void => {
  let state = initialEngineState()
  let at = T0
  state = visit(state, poolEvent(w), at, w.shared(at)).state
  for (const m of w.moves)
    for (const event of m.events) {
      at += m.wait
      state = visit(state, event, at, w.shared(at)).state
    }
}

const internal = (a: Applied) => a.logs.filter((l) => l.message.startsWith("internal:"))

describe("engine: the shared state an event needs is declared up front", () => {
  it.prop("US-40 an event declared as needing nothing steps without a snapshot and decides what it decides with one", [world], ([w]) => {
    walk(w, (state, event, at, snapshot) => {
      const needs = needsOf(state, event)
      const given = applied(engineStep(state, event, at, snapshot))
      expect(internal(given)).toEqual([])
      if (needs.shared !== "none") {
        expect(engineStep(state, event, at)._tag).toBe("NeedSnapshot")
        return given
      }
      const alone = engineStep(state, event, at)
      expect(alone._tag).toBe("Applied")
      expect(comparable(alone)).toBe(comparable(given))
      return given
    })
  }, { fastCheck: { numRuns: 150 } })

  it.prop("US-40 a declared read writes nothing shared, and a declaration without peers does not depend on them", [world], ([w]) => {
    walk(w, (state, event, at, snapshot) => {
      const needs = needsOf(state, event)
      const given = applied(engineStep(state, event, at, snapshot))
      if (needs.shared === "read") {
        expect(given.commit.claims).toBeUndefined()
        expect(given.commit.cool).toEqual([])
        expect(given.commit.uncool).toEqual([])
      }
      if (!needs.peers) expect(comparable(engineStep(state, event, at, { ...snapshot, peers: [] }))).toBe(comparable(given))
      return given
    })
  }, { fastCheck: { numRuns: 150 } })

  it.prop("US-45 the lines the engine applies replay to the decisions it took", [world], ([w]) => {
    const lines: Array<unknown> = []
    const decided: Array<string> = []
    walk(w, (state, event, at, snapshot) => {
      const needs = needsOf(state, event)
      const o = applied(engineStep(state, event, at, needs.shared === "none" ? undefined : snapshot))
      lines.push(...o.lines)
      decided.push(...o.decisions.map(formatDecision))
      return o
    })
    const replayed = replayText(lines.map((l) => JSON.stringify(l)).join("\n") + "\n")
    expect(replayed.error).toBeUndefined()
    expect(replayed.decisions.map(formatDecision)).toEqual(decided)
  }, { fastCheck: { numRuns: 150 } })
})
