/** Fallback models for the primary session (issue 12, US-50): the decisions. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { formatDecision } from "../../../src/core/trace/format.js"
import { replayText } from "../../../src/core/trace/replay.js"
import type { Cooldown } from "../../../src/core/pool/cooldown.js"
import { decideSwitch, messageModel, parseFallbackModels, switchesOn, type Episode } from "../../../src/core/quota/fallback.js"
import { T0 } from "../../helpers.js"

const cool = (model: string, until = T0 + 60_000): [string, Cooldown] => [model, { model, reason: "quota", strikes: 1, scope: "model", since: T0, until, source: "header" }]
const FALLBACKS = ["go/b", "zen/c"]

describe("fallback decisions (US-50)", () => {
  it("US-50 fallbackModels are provider/model strings in order; bad entries and duplicates are dropped with a warning each", () => {
    expect(parseFallbackModels(undefined)).toEqual({ models: [], warnings: [] })
    expect(parseFallbackModels(["go/b", " zen/c ", "go/b", "nope", 3])).toEqual({
      models: ["go/b", "zen/c"],
      warnings: [
        "option fallbackModels: entry 3: duplicate model go/b dropped",
        "option fallbackModels: entry 4: model nope is not provider/model-id; dropped",
        "option fallbackModels: entry 5: model 3 is not provider/model-id; dropped"
      ]
    })
    expect(parseFallbackModels("go/b").warnings).toEqual(["option fallbackModels must be an array of provider/model strings; ignored"])
  })

  it("US-50 only quota and rate limits switch: a context limit, bad credentials, an outage or no class never do", () => {
    expect(["quota", "rate_limit"].map((c) => switchesOn(c as never))).toEqual([true, true])
    for (const c of ["context_limit", "auth", "outage", "unavailable", undefined]) expect(switchesOn(c as never)).toBe(false)
    expect(decideSwitch(undefined, { model: "zen/a", cls: "context_limit", via: "idle" }, FALLBACKS, new Map(), T0).switch).toBeUndefined()
  })

  it("US-50 a quota on the root's model switches to the first fallback that is not cooling; an empty list changes nothing", () => {
    const first = decideSwitch(undefined, { model: "zen/a", cls: "quota", via: "abort" }, FALLBACKS, new Map(), T0)
    expect(first.switch).toEqual({ from: "zen/a", to: "go/b", via: "abort" })
    expect(first.episode).toEqual({ original: "zen/a", active: "go/b", tried: ["go/b"] })
    const skipCooling = decideSwitch(undefined, { model: "zen/a", cls: "rate_limit", via: "idle" }, FALLBACKS, new Map([cool("go/b")]), T0)
    expect(skipCooling.switch).toEqual({ from: "zen/a", to: "zen/c", via: "idle" })
    expect(decideSwitch(undefined, { model: "zen/a", cls: "quota", via: "abort" }, [], new Map(), T0)).toEqual({ episode: undefined })
  })

  it("US-50 each fallback at most once per episode: the fallback running out moves on, the last one running out stops, nothing loops", () => {
    let e: Episode | undefined
    const hit = (model: string) => {
      const r = decideSwitch(e, { model, cls: "quota", via: "abort" }, FALLBACKS, new Map(), T0)
      e = r.episode
      return r.switch?.to
    }
    expect(hit("zen/a")).toBe("go/b")
    expect(hit("go/b")).toBe("zen/c")
    expect(hit("zen/c")).toBeUndefined()
    expect(hit("zen/c")).toBeUndefined()
    expect(e).toEqual({ original: "zen/a", active: "zen/c", tried: ["go/b", "zen/c"] })
  })

  it("US-50 a late second report of the original's error, after the switch, switches nothing", () => {
    const first = decideSwitch(undefined, { model: "zen/a", cls: "quota", via: "idle" }, FALLBACKS, new Map(), T0)
    expect(first.switch?.to).toBe("go/b")
    const again = decideSwitch(first.episode, { model: "zen/a", cls: "quota", via: "idle" }, FALLBACKS, new Map(), T0)
    expect(again).toEqual({ episode: first.episode })
  })

  it("US-50 while the original cools a message naming it runs on the active fallback; once it recovers the message keeps it and the episode ends", () => {
    const e: Episode = { original: "zen/a", active: "go/b", tried: ["go/b"] }
    expect(messageModel(e, "zen/a", new Map([cool("zen/a", T0 + 60_000)]), T0)).toEqual({ model: "go/b", episode: e })
    expect(messageModel(e, "other/m", new Map([cool("zen/a")]), T0)).toEqual({ model: "other/m", episode: e })
    expect(messageModel(e, "zen/a", new Map([cool("zen/a", T0 + 60_000)]), T0 + 60_000)).toEqual({ model: "zen/a", episode: undefined })
    expect(messageModel(undefined, "zen/a", new Map(), T0)).toEqual({ model: "zen/a", episode: undefined })
  })

  it.prop("US-50 however many signals arrive, an episode never uses a fallback twice nor more fallbacks than there are", [fc.array(fc.constantFrom("zen/a", "go/b", "zen/c", "x/y"), { maxLength: 30 })], ([models]) => {
    let e: Episode | undefined
    for (const model of models) {
      const before = e
      const r = decideSwitch(e, { model, cls: "quota", via: "abort" }, FALLBACKS, new Map(), T0)
      e = r.episode
      if (e === undefined) continue
      expect(new Set(e.tried).size).toBe(e.tried.length)
      expect(e.tried.length).toBeLessThanOrEqual(FALLBACKS.length)
      expect(e.tried).not.toContain(e.original)
      if (r.switch !== undefined) {
        expect(r.switch.to).not.toBe(model)
        // within the same episode, the switch goes to a model not tried before
        if (before !== undefined && before.original === e.original) expect(before.tried).not.toContain(r.switch.to)
      }
    }
  })

  it("US-50 a recorded switch replays: the TRACE-FORMAT example gives its documented decisions; the same trace without primary switches nothing", () => {
    const lines = [
      `{"at":1796115600000,"type":"pool","slots":[{"model":"zen/a","weight":1}],"fallbacks":["go/b","go/c"]}`,
      `{"at":1796115601000,"type":"retry","session":"ses_root","message":"Monthly usage limit reached","next":1796115604000,"primary":"main/big"}`,
      `{"at":1796115603000,"type":"switched","session":"ses_root","to":"go/b","ok":true}`,
      `{"at":1796115610000,"type":"message","session":"ses_root","model":"main/big"}`,
      `{"at":1796115662000,"type":"message","session":"ses_root","model":"main/big"}`
    ]
    const r = replayText(lines.join("\n"))
    expect(r.error).toBeUndefined()
    expect(r.decisions.map(formatDecision)).toEqual([
      `{"at":1796115601000,"type":"cool","models":["main/big"],"scope":"model","reason":"quota","until":1796115661000,"strike":1}`,
      `{"at":1796115601000,"type":"switch","session":"ses_root","from":"main/big","to":"go/b","via":"abort","until":1796115661000}`,
      `{"at":1796115610000,"type":"model","session":"ses_root","requested":"main/big","model":"go/b"}`
    ])
    // the original recovered: the last message kept its model and the episode is over
    expect(r.state.episodes.size).toBe(0)
    const old = replayText(lines.map((l) => l.replace(`,"primary":"main/big"`, "")).join("\n"))
    expect(old.decisions.map((d) => d.type)).toEqual(["ignore"])
  })

  it("US-50 a context limit on a root session cools nothing and switches nothing; a bad fallback field is refused by name", () => {
    const r = replayText(
      [
        `{"at":1,"type":"pool","slots":[{"model":"zen/a","weight":1}],"fallbacks":["go/b"]}`,
        `{"at":2,"type":"limit","session":"s","text":"This model's maximum context length is 8192 tokens","status":400,"primary":"main/big"}`
      ].join("\n")
    )
    expect(r.decisions.map(formatDecision)).toEqual([`{"at":2,"type":"ignore","reason":"context_limit"}`])
    expect(replayText(`{"at":1,"type":"switched","session":"s","to":"go/b"}`).error?.message).toBe(`missing required field "ok"`)
    expect(replayText(`{"at":1,"type":"pool","slots":[{"model":"zen/a","weight":1}],"fallbacks":"go/b"}`).error?.message).toBe(`field "fallbacks" must be an array of strings`)
  })
})
