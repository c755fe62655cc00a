/** Reading hook inputs as untrusted data (src/plugin/extract.ts): total, bounded, and faithful to plain JSON. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { at, COPY_LIMITS, describe as describeError, field, jsonCopy, pluginOptions, text } from "../../src/core/extract.js"
import { cyclic, revoked, throwingGetters, trapEverything, unprintable } from "./hostile.js"

describe("extract: guarded reads", () => {
  it("US-5 a read through a throwing getter, a trapping Proxy or a revoked Proxy gives undefined", () => {
    expect(field(throwingGetters({ a: 1 }, ["a"]), "a")).toBeUndefined()
    expect(field(trapEverything(), "a")).toBeUndefined()
    expect(field(revoked(), "a")).toBeUndefined()
    expect(at({ a: { b: throwingGetters({ c: 1 }, ["c"]) } }, "a", "b", "c")).toBeUndefined()
    expect(at({ a: { b: { c: "x" } } }, "a", "b", "c")).toBe("x")
    expect(field("string", "length")).toBeUndefined()
    expect(text("x".repeat(2_000))).toBeUndefined()
  })

  it("US-5 a description of any thrown value is one line and never throws", () => {
    expect(describeError(new Error("first\nsecond"))).toBe("first")
    expect(describeError(unprintable())).toBe("unknown error")
    expect(describeError(revoked())).toBe("unknown error")
    expect(describeError(throwingGetters({ message: "m" }, ["message"]))).toBe("[object Object]")
  })
})

describe("extract: bounded plain copies", () => {
  it("US-4 cycles, throwing getters and Proxies are left out; an Error keeps its name and message", () => {
    const error = throwingGetters({ name: "APIError", data: { statusCode: 429 } }, ["stack"])
    expect(jsonCopy(cyclic({ a: 1 }))).toEqual({ a: 1, list: [null, {}] })
    expect(jsonCopy(error)).toEqual({ name: "APIError", data: { statusCode: 429 } })
    expect(jsonCopy({ p: trapEverything(), r: revoked() })).toEqual({ p: {}, r: {} })
    expect(jsonCopy(new TypeError("bad"))).toEqual({ name: "TypeError", message: "bad" })
    expect(jsonCopy({ n: 10n, nan: Number.NaN, f: () => 1, s: Symbol("s"), d: new Date(0), b: new String("x") })).toEqual({ n: "10", nan: null, d: "1970-01-01T00:00:00.000Z", b: "x" })
  })

  it("US-4 a __proto__ key is copied as data and never becomes the prototype", () => {
    const copy = jsonCopy(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined()
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true}}')
  })

  it("US-4 depth, keys, strings and the total are bounded", () => {
    let deep: unknown = 1
    for (let i = 0; i < 10_000; i++) deep = { a: deep }
    expect(JSON.stringify(jsonCopy(deep)).length).toBeLessThan(200)
    const wide = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i]))
    expect(Object.keys(jsonCopy(wide) as object)).toHaveLength(COPY_LIMITS.keys)
    expect((jsonCopy({ s: "x".repeat(1_000_000) }) as { s: string }).s).toHaveLength(COPY_LIMITS.text)
    const many = Array.from({ length: 1_000 }, () => Array.from({ length: 1_000 }, () => 1))
    expect(JSON.stringify(jsonCopy(many)).length).toBeLessThan(COPY_LIMITS.nodes * 3)
  })

  it.prop("US-4 plain JSON within the limits is copied unchanged", [fc.jsonValue({ maxDepth: 6 })], ([v]) => {
    expect(JSON.stringify(jsonCopy(v))).toBe(JSON.stringify(v))
  })

  it.prop("US-17 options that are not an object give none; an object gives a plain copy", [fc.anything({ withBigInt: true, withMap: true, withNullPrototype: true })], ([v]) => {
    const o = pluginOptions(v)
    if (o !== undefined) expect(JSON.stringify(jsonCopy(o))).toBe(JSON.stringify(o))
    if (typeof v !== "object" || v === null || Array.isArray(v)) expect(o).toBeUndefined()
  })
})
