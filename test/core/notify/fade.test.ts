/** Fade (SPEC §10.8): a popup stays up at least FADE_MIN_MS; what a close closes; a hop send waits behind its root's close. */
import { describe, expect, it } from "@effect/vitest"
import type { ChannelName } from "../../../src/core/notify/channel.js"
import { FADE_MIN_MS, fadeCloseAt, popupsShown, sendWaitsForClose, type SentPopup } from "../../../src/core/notify/fade.js"

const T0 = Date.parse("2026-12-01T12:00:00Z")

describe("fade", () => {
  it("US-30 the minimum age of a popup is 5 s (SPEC §1)", () => {
    expect(FADE_MIN_MS).toBe(5_000)
  })

  it.each<[string, number, number, number]>([
    ["just shown: 5 s later", T0, T0, T0 + 5_000],
    ["shown 2 s ago: 3 s later", T0, T0 + 2_000, T0 + 5_000],
    ["shown exactly 5 s ago: now", T0, T0 + 5_000, T0 + 5_000],
    ["shown long ago: now", T0, T0 + 60_000, T0 + 60_000],
    ["shown after now (a slow hop returned late): 5 s after it was shown", T0 + 3_000, T0, T0 + 8_000]
  ])("US-30 a popup %s", (_name, shownAt, now, at) => {
    expect(fadeCloseAt(shownAt, now)).toBe(at)
  })

  it.each<[string, ReadonlyArray<SentPopup>, ReturnType<typeof popupsShown>]>([
    ["no sends: nothing to close", [], undefined],
    ["only failed sends: nothing to close", [{ ok: false, doneAt: T0 }, { ok: false, doneAt: T0 + 1 }], undefined],
    ["one shown popup with its id", [{ ok: true, id: 7, doneAt: T0 }], { shownAt: T0, ids: [7] }],
    ["a hop's popup has no id", [{ ok: true, doneAt: T0 }], { shownAt: T0, ids: [] }],
    [
      "dated by the newest shown, whatever the order; a failed send's later return does not count",
      [{ ok: true, id: 1, doneAt: T0 + 2_000 }, { ok: true, id: 2, doneAt: T0 }, { ok: false, doneAt: T0 + 9_000 }],
      { shownAt: T0 + 2_000, ids: [1, 2] }
    ],
    ["an id a failed send gave is closed too", [{ ok: false, id: 3, doneAt: T0 }, { ok: true, id: 4, doneAt: T0 + 1 }], { shownAt: T0 + 1, ids: [3, 4] }]
  ])("US-30 %s", (_name, sends, shown) => {
    expect(popupsShown(sends)).toEqual(shown)
  })

  it.each<[ChannelName, boolean]>([
    ["ssh", true],
    ["notify-send", false],
    ["osascript", false],
    ["none", false]
  ])("US-30 a send via %s waits behind its root's pending close: %s", (channel, waits) => {
    expect(sendWaitsForClose(channel)).toBe(waits)
  })
})
