/** Whether opencode still runs a session (its `GET /session/status` answer), and the two polls of it (SPEC §8.3, US-50). */
import { describe, expect, it } from "@effect/vitest"
import { ABORT_CONFIRM_POLL, IDLE_WAIT_POLL, isRunning, pollReads, type StatusPoll } from "../../../src/core/session/running.js"

describe("a session status answer", () => {
  it.each<[string, unknown, boolean]>([
    ["busy", { ses_1: { type: "busy" } }, true],
    ["retrying", { ses_1: { type: "retry", attempt: 2, message: "rate limited", next: 5 } }, true],
    ["idle", { ses_1: { type: "idle" } }, false],
    ["absent from the map (opencode lists only what it runs)", {}, false],
    ["absent, another session busy", { ses_2: { type: "busy" } }, false],
    ["listed with an unknown type", { ses_1: { type: "compacting" } }, true],
    ["listed without a type", { ses_1: {} }, true],
    ["listed as a bare value", { ses_1: "busy" }, true],
    ["no data (an empty answer)", undefined, false],
    ["null data", null, false],
    ["an array", [{ type: "busy" }], false],
    ["an inherited name is not a listing", Object.create({ ses_1: { type: "busy" } }) as unknown, false]
  ])("US-10 a session %s: running %s", (_name, status, running) => {
    expect(isRunning(status, "ses_1")).toBe(running)
  })
})

describe("polling the status", () => {
  it.each<[string, StatusPoll, number, number, number]>([
    ["after an abort: two reads, 1 s apart", ABORT_CONFIRM_POLL, 1_000, 1_000, 2],
    ["before a continue prompt: every 250 ms for up to 60 s", IDLE_WAIT_POLL, 250, 60_000, 241]
  ])("US-50 %s", (_name, poll, everyMs, forMs, reads) => {
    expect(poll).toEqual({ everyMs, forMs })
    expect(pollReads(poll)).toBe(reads)
  })

  it.each<[StatusPoll, number]>([
    [{ everyMs: 100, forMs: 0 }, 1],
    [{ everyMs: 100, forMs: 99 }, 1],
    [{ everyMs: 100, forMs: 100 }, 2],
    [{ everyMs: 100, forMs: 250 }, 3]
  ])("US-10 a poll of %j reads at most %i times (the last read at or before forMs)", (poll, reads) => {
    expect(pollReads(poll)).toBe(reads)
  })
})
