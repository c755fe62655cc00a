/** The log line of each delivery (SPEC §10.5): info for a success; a failure warns the first time, debug when it only repeats. */
import { describe, expect, it } from "@effect/vitest"
import type { ChannelName } from "../../../src/core/notify/channel.js"
import { deliveryLog, failureLevel, NO_DELIVERIES, type DeliveryOutcome } from "../../../src/core/notify/deliveryLog.js"

/** The levels and messages a run of deliveries logs, from a fresh process. */
const run = (outcomes: ReadonlyArray<DeliveryOutcome>): Array<string> => {
  let memory = NO_DELIVERIES
  return outcomes.map((d) => {
    const line = deliveryLog(memory, "done", d)
    memory = line.memory
    return `${line.level} ${line.message}`
  })
}
const ok = (channel: ChannelName): DeliveryOutcome => ({ ok: true, channel })
const failed = (channel: ChannelName, reason?: string): DeliveryOutcome => ({ ok: false, channel, reason })

describe("delivery log lines", () => {
  it.each<[ChannelName, number, string, string | undefined, "warn" | "debug"]>([
    ["ssh", 0, "exit 255", undefined, "warn"],
    ["ssh", 1, "exit 255", "exit 255", "debug"],
    ["ssh", 1, "timed out", "exit 255", "debug"],
    ["ssh", 3, "timed out", undefined, "debug"],
    ["none", 0, "no notify host", undefined, "warn"],
    ["none", 1, "no notify host", "no notify host", "debug"],
    ["notify-send", 0, "no bus", undefined, "warn"],
    ["notify-send", 1, "no bus", "no bus", "debug"],
    ["notify-send", 1, "timed out", "no bus", "warn"],
    ["notify-send", 5, "no bus", undefined, "warn"],
    ["osascript", 2, "exit 1", "exit 1", "debug"],
    ["osascript", 2, "exit 1", "exit 2", "warn"]
  ])("US-14 a failure via %s after %i failures, reason %j, previous %j, is %s", (channel, before, reason, previous, level) => {
    expect(failureLevel(channel, before, reason, previous)).toBe(level)
  })

  it("US-11 a success is info and names the kind and the channel", () => {
    expect(deliveryLog(NO_DELIVERIES, "question", ok("osascript"))).toEqual({ memory: NO_DELIVERIES, level: "info", message: "notified question via osascript" })
  })

  it("US-14 three failed hops in one process: one warning, then debug, whatever the reasons", () => {
    expect(run([failed("ssh", "exit 255"), failed("ssh", "timed out"), ok("ssh"), failed("ssh", "exit 255")])).toEqual([
      "warn notification failed via ssh: exit 255",
      "debug notification failed via ssh: timed out",
      "info notified done via ssh",
      "debug notification failed via ssh: exit 255"
    ])
  })

  it("US-11 notify-send failing the same way again is debug; a new reason, or the same one after a success, warns again", () => {
    expect(run([failed("notify-send", "no bus"), failed("notify-send", "no bus"), ok("notify-send"), failed("notify-send", "no bus"), failed("notify-send", "timed out"), failed("notify-send", "timed out")])).toEqual([
      "warn notification failed via notify-send: no bus",
      "debug notification failed via notify-send: no bus",
      "info notified done via notify-send",
      "warn notification failed via notify-send: no bus",
      "warn notification failed via notify-send: timed out",
      "debug notification failed via notify-send: timed out"
    ])
  })

  it("US-11 a failure without a reason says unknown reason, and two of them count as the same reason", () => {
    expect(run([failed("notify-send"), failed("notify-send")])).toEqual(["warn notification failed via notify-send: unknown reason", "debug notification failed via notify-send: unknown reason"])
  })

  it("US-14 the memory counts every failure and keeps the last reason until a success", () => {
    const one = deliveryLog(NO_DELIVERIES, "done", failed("ssh", "exit 255"))
    expect(one.memory).toEqual({ failures: 1, lastReason: "exit 255" })
    const two = deliveryLog(one.memory, "done", ok("ssh"))
    expect(two.memory).toEqual({ failures: 1, lastReason: undefined })
  })
})
