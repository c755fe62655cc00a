/** `ocpool metrics --listen` (issue 36): the address forms taken, and a one-line problem for the rest. */
import { describe, expect, it } from "@effect/vitest"
import { authority, parseListen } from "../../../src/core/metrics/listen.js"

describe("US-53 --listen", () => {
  it("US-53 HOST:PORT, [IPV6]:PORT, :PORT (every interface), port 0 (any free one)", () => {
    expect(parseListen("127.0.0.1:9464")).toEqual({ _tag: "Listen", host: "127.0.0.1", port: 9464 })
    expect(parseListen("localhost:0")).toEqual({ _tag: "Listen", host: "localhost", port: 0 })
    expect(parseListen("[::1]:9464")).toEqual({ _tag: "Listen", host: "::1", port: 9464 })
    expect(parseListen(":9464")).toEqual({ _tag: "Listen", host: "0.0.0.0", port: 9464 })
    expect(authority("::1", 9464)).toBe("[::1]:9464")
    expect(authority("127.0.0.1", 80)).toBe("127.0.0.1:80")
  })

  it("US-53 anything else is one line saying what was expected", () => {
    for (const bad of ["9464", "", "host:", "host:65536", "host:-1", "[zz]:1", "[::1]", "::1:9464", "a b:1", "h:1:2", "-h:1", "x".repeat(300) + ":1"]) {
      const r = parseListen(bad)
      expect(r._tag, bad).toBe("Problem")
      if (r._tag === "Problem") expect(r.message).not.toContain("\n")
    }
  })
})
