/** opencode's title generator (its first system line says what it is) is never coached (US-49). */
import { describe, expect, it } from "@effect/vitest"
import { maybeTitleGenerator, type FirstLine } from "../../../src/core/session/titleGenerator.js"

const line = (value: unknown): FirstLine => ({ readable: true, value })

describe("the title generator", () => {
  it.each<[string, FirstLine | undefined, boolean]>([
    ["opencode 1.18.33's title prompt", line("You are a title generator. You output ONLY a thread title. Nothing else."), true],
    ["the prefix alone", line("You are a title generator"), true],
    ["an unreadable first line (it may be the title generator's)", { readable: false }, true],
    ["an empty system prompt", undefined, false],
    ["opencode's agent prompt", line("You are opencode, an interactive CLI tool"), false],
    ["the prefix further in", line("Note. You are a title generator"), false],
    ["another case", line("you are a title generator"), false],
    ["a leading space", line(" You are a title generator"), false],
    ["an absent first line", line(undefined), false],
    ["a non-string first line", line(["You are a title generator"]), false]
  ])("US-49 %s: may be the title generator: %s", (_name, first, title) => {
    expect(maybeTitleGenerator(first)).toBe(title)
  })
})
