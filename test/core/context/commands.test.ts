import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { expandTemplate, MAP_COMMANDS } from "../../../src/core/context/commands.js"

describe("the context map's commands (US-22, SPEC §13)", () => {
  it("US-22 /context-update with the arguments src/net expands to a template with `Focus: src/net` and no $ARGUMENTS", () => {
    const text = expandTemplate(MAP_COMMANDS["context-update"].template, "src/net")
    expect(text.split("\n")).toContain("Focus: src/net")
    expect(text).not.toContain("$ARGUMENTS")
    // no arguments: an empty focus, still no placeholder left
    const bare = expandTemplate(MAP_COMMANDS["context-update"].template, "")
    expect(bare.split("\n")).toContain("Focus: ")
    expect(bare).not.toContain("$ARGUMENTS")
  })

  it("US-22 the /context-init and /context-review templates contain no $ARGUMENTS (and no positional placeholder)", () => {
    for (const name of ["context-init", "context-review"] as const) {
      const template = MAP_COMMANDS[name].template
      expect(template, name).not.toContain("$ARGUMENTS")
      expect(template, name).not.toMatch(/\$\d/)
    }
    expect(MAP_COMMANDS["context-update"].template.match(/\$ARGUMENTS/g)).toHaveLength(1)
  })

  it("US-22 each command runs the context agent as a subtask and names the map directory", () => {
    for (const command of Object.values(MAP_COMMANDS)) {
      expect(command).toMatchObject({ agent: "context", subtask: true })
      expect(command.description.length).toBeGreaterThan(0)
      expect(command.template).toContain(".opencode/context/")
      expect(command.template).toContain("manager.md")
    }
  })

  it("US-22 expansion mirrors opencode 1.18.33: positional $n (the last takes the rest, quotes trimmed), $ARGUMENTS whole, else appended", () => {
    expect(expandTemplate("a=$1 b=$2", 'x "y z" w')).toBe("a=x b=y z w")
    expect(expandTemplate("a=$1 b=$2", "x")).toBe("a=x b=")
    expect(expandTemplate("$2 then $1", "p q r")).toBe("q r then p")
    expect(expandTemplate("all: $ARGUMENTS; first: $1", "one two")).toBe("all: one two; first: one two")
    expect(expandTemplate("Review the map.", "src/net")).toBe("Review the map.\n\nsrc/net")
    expect(expandTemplate("Review the map.", "   ")).toBe("Review the map.")
    expect(expandTemplate("  Focus: $ARGUMENTS  ", "")).toBe("Focus:")
    // like opencode's string replacement, `$&` in the arguments stands for the placeholder
    expect(expandTemplate("[$ARGUMENTS]", "$&")).toBe("[$ARGUMENTS]")
  })

  it.prop("US-22 any argument text without `$` or line breaks lands on the Focus line verbatim (trimmed at the ends only by the template)", [fc.stringMatching(/^[a-z0-9/ ._-]{0,40}$/)], ([args]) => {
    const text = expandTemplate(MAP_COMMANDS["context-update"].template, args)
    expect(text).not.toContain("$ARGUMENTS")
    expect(text.split("\n")).toContain(`Focus: ${args}`)
  })
})
