import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { depthOf, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, MAX_PARAMS_DEPTH, METHOD_NOT_FOUND, plainError, triage, type Methods } from "../../../src/core/mcp/jsonRpc.js"

const methods: Methods = {
  isRequest: (m) => m === "ping" || m === "tools/call",
  isNotification: (m) => m === "notifications/initialized",
  paramsProblem: (m, p) => (m === "tools/call" && (typeof p !== "object" || p === null || !("name" in p)) ? "name: is missing" : undefined)
}

describe("JSON-RPC 2.0 triage (issue 33)", () => {
  it("US-51 requests, notifications and the client's answers go on; everything else is answered with its code", () => {
    expect(triage({ jsonrpc: "2.0", id: "007", method: "ping" }, methods)).toMatchObject({ _tag: "Request", id: "007" })
    expect(triage({ jsonrpc: "2.0", method: "notifications/initialized" }, methods)).toMatchObject({ _tag: "Notification" })
    expect(triage({ jsonrpc: "2.0", method: "notifications/other" }, methods)).toMatchObject({ _tag: "Drop" })
    expect(triage({ jsonrpc: "2.0", id: 3, result: {} }, methods)).toMatchObject({ _tag: "Response" })
    const code = (m: unknown) => {
      const t = triage(m, methods)
      return t._tag === "Answer" ? [t.answer.id, t.answer.error.code] : t._tag
    }
    expect(code("x")).toEqual([null, INVALID_REQUEST])
    expect(code(null)).toEqual([null, INVALID_REQUEST])
    expect(code([1])).toEqual([null, INVALID_REQUEST])
    expect(code({ jsonrpc: "2.0", id: [1], method: "ping" })).toEqual([null, INVALID_REQUEST])
    expect(code({ jsonrpc: "2.0", id: Number.NaN, method: "ping" })).toEqual([null, INVALID_REQUEST])
    expect(code({ id: 1, method: "ping" })).toEqual([1, INVALID_REQUEST])
    expect(code({ jsonrpc: "2.0", id: 2 })).toEqual([2, INVALID_REQUEST])
    expect(code({ jsonrpc: "2.0", id: 2, method: ["ping"] })).toEqual([2, INVALID_REQUEST])
    expect(code({ jsonrpc: "2.0", id: null, method: "ping" })).toEqual([null, INVALID_REQUEST])
    expect(code({ jsonrpc: "2.0", id: "u", method: "nope" })).toEqual(["u", METHOD_NOT_FOUND])
    expect(code({ jsonrpc: "2.0", id: 5, method: "tools/call", params: 1 })).toEqual([5, INVALID_PARAMS])
    let deep: unknown = 1
    for (let i = 0; i < MAX_PARAMS_DEPTH + 1; i++) deep = { a: deep }
    expect(code({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "x", arguments: deep } })).toEqual([6, INVALID_PARAMS])
  })

  it.prop("US-51 any JSON value is judged without throwing, and an answer always carries a usable id and a standard code", [fc.jsonValue()], ([value]) => {
    const t = triage(value, methods)
    if (t._tag === "Answer") {
      expect([null, "string", "number"]).toContain(t.answer.id === null ? null : typeof t.answer.id)
      expect([INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS]).toContain(t.answer.error.code)
    }
  })

  it("US-51 depth is counted without recursion (a million levels) and stops past the limit", () => {
    const deep = JSON.parse(`${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`) as unknown
    expect(depthOf(deep)).toBe(MAX_PARAMS_DEPTH + 1)
    expect(depthOf({ a: [1, { b: 2 }] })).toBe(3)
    expect(depthOf("x")).toBe(0)
  })

  it("US-51 the server's errors are plain: a failure keeps its code and message, a defect is an internal error without its text", () => {
    expect(plainError({ _tag: "Cause", code: -32602, message: "x", data: { _tag: "Fail", error: { code: -32602, message: "Tool 'x' not found" } } })).toEqual({ code: -32602, message: "Tool 'x' not found" })
    expect(plainError({ _tag: "Cause", code: 0, message: "{...}", data: { _tag: "Die", defect: "RangeError: Maximum call stack size exceeded" } })).toEqual({ code: INTERNAL_ERROR, message: "Internal error" })
    expect(plainError({ _tag: "Defect", code: 1, message: "A defect occurred" })).toEqual({ code: INTERNAL_ERROR, message: "Internal error" })
    expect(plainError({ code: -32000, message: "custom" })).toEqual({ code: -32000, message: "custom" })
    expect(plainError("weird")).toEqual({ code: INTERNAL_ERROR, message: "Internal error" })
  })
})
