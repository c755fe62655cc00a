/** The plugin's log lines carry what they are about (issue 34): claim, session and model as annotations, the text unchanged. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { MemoryLine } from "../../src/layers/opencode/AppLogMemory.js"
import { bootsPerTest, childCreated, event, POOL2, settle, spawn, type Booted } from "./boot.js"

const { start } = bootsPerTest()

/** The lines whose text matches, with their annotations (the memory log records them as `details.annotations`). */
const annotated = (b: Booted, pattern: RegExp) =>
  (b.logs as Array<MemoryLine>).filter((l) => pattern.test(l.message)).map((l) => ({ level: l.level, message: l.message, annotations: l.details?.annotations }))

const rateLimited = (b: Booted) => event(b, "session.error", { sessionID: "s1", error: { name: "APIError", data: { statusCode: 429, message: "x" } } })

describe("log lines with their annotations (issue 34)", () => {
  it("US-31 a route names its claim and model, a cooldown its model, a failed abort its claim, session and model", async () => {
    const b = await start({ models: POOL2 }, ["HTTP 500"])
    await spawn(b, "p", "c1")
    await childCreated(b, "s1", "p", "explore-1")
    await rateLimited(b)
    await settle(b)
    expect(annotated(b, /^routed /)).toEqual([
      { level: "info", message: "routed explore -> explore-1 slot=1 model=zen/alpha load=1/2 pass=first", annotations: { claim: "p:c1", model: "zen/alpha" } }
    ])
    expect(annotated(b, /^cooling /)).toEqual([{ level: "info", message: expect.stringMatching(/^cooling zen\/alpha /), annotations: { model: "zen/alpha" } }])
    expect(annotated(b, /^abort failed /)).toEqual([
      { level: "warn", message: "abort failed claim=p:c1 session=s1 attempt=1/3: HTTP 500", annotations: { claim: "p:c1", session: "s1", model: "zen/alpha" } }
    ])
    // a line about no claim, session or model has none
    expect(annotated(b, /^reaper armed/)).toEqual([{ level: "info", message: expect.stringMatching(/^reaper armed: /), annotations: undefined }])
  })

  it("US-10 sweeps run outside the plugin's runtime: the aborts they fork still log to the plugin's log, the give-up lines with the claim, its session and model", async () => {
    const b = await start({ models: POOL2 }, ["HTTP 500"])
    await spawn(b, "p", "c1")
    await childCreated(b, "s1", "p", "explore-1")
    await rateLimited(b)
    await settle(b)
    await Effect.runPromise(b.hooks.engine.sweep)
    await settle(b)
    await Effect.runPromise(b.hooks.engine.sweep)
    await settle(b)
    const about = { claim: "p:c1", session: "s1", model: "zen/alpha" }
    expect(annotated(b, /^abort failed /).map((l) => [l.message, l.annotations])).toEqual([
      ["abort failed claim=p:c1 session=s1 attempt=1/3: HTTP 500", about],
      ["abort failed claim=p:c1 session=s1 attempt=2/3: HTTP 500", about]
    ])
    expect(annotated(b, /gave.up/)).toEqual([
      { level: "error", message: "reaped claim=p:c1 session=s1 model=zen/alpha age=0s silence=0s outcome=gave_up", annotations: about },
      { level: "error", message: "abort gave up after 3 attempts: session s1 is still running; stop it by hand", annotations: about }
    ])
  })
})
