/** `pool_status` ends with the compact view of the live view (issue 24): the same picture in the chat as on the terminal. */
import { describe, expect, it } from "@effect/vitest"
import { bootsPerTest, childCreated, event, POOL2, spawn, type Booted } from "./boot.js"

const { start } = bootsPerTest()

const poolStatus = async (b: Booted): Promise<string> => (await (b.hooks.tool!.pool_status as { execute: (a: unknown, c: unknown) => Promise<string> }).execute({}, {})) as string

/** The lines after the `at a glance:` heading, which must be the output's last block. */
const glance = (text: string): ReadonlyArray<string> => {
  const at = text.lastIndexOf("\n\nat a glance:\n")
  expect(at).toBeGreaterThan(0)
  return text.slice(at + "\n\nat a glance:\n".length).split("\n")
}

describe("US-6 pool_status ends with the compact view", () => {
  it("US-6 on a fresh boot the output ends with a blank line, `at a glance:` and the slots drawn as bars", async () => {
    const b = await start({ models: POOL2 })
    const text = await poolStatus(b)
    expect(text).toMatch(/reaper: every 3600s.*\n\nat a glance:\n/s)
    expect(glance(text)).toEqual([
      "opencode-pool: 0 claims, 1 process, 0 cooling",
      "  1. [░░░░░░░░░░░░] 0/2  zen/alpha  <- next (first pass)",
      "  2. [░░░░░░░░░░░░] 0/2  go/gamma"
    ])
  })

  it("US-6 a claim fills its slot's bar and a rate-limited model shows in the cooling section with its strike and countdown", async () => {
    const b = await start({ models: POOL2 })
    expect(await spawn(b, "p", "c1")).toBe("explore-1")
    await childCreated(b, "s1", "p", "explore-1")
    await event(b, "message.updated", { info: { id: "msg_1", sessionID: "s1", role: "assistant", providerID: "zen", modelID: "alpha", error: { name: "APIError", data: { statusCode: 429, message: "Slow down" } } } })
    expect(await spawn(b, "p", "c2")).toBe("explore-2")
    const lines = glance(await poolStatus(b))
    expect(lines[0]).toMatch(/^opencode-pool: \d+ claims?, 1 process, 1 cooling$/)
    expect(lines[1]).toMatch(/^ {2}1\. \[[█░]{12}\] \d\/2 {2}zen\/alpha {2}cooling$/)
    expect(lines[2]).toMatch(/^ {2}2\. \[█{6}░{6}\] 1\/2 {2}go\/gamma {3}<- next \(second pass\)$/)
    expect(lines[3]).toBe("cooling")
    expect(lines[4]).toMatch(/^ {2}zen\/alpha {2}rate_limit strike 1 {2}\d+(s|m\d\ds)$/)
    expect(lines).toHaveLength(5)
  })
})
