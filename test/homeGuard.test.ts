/**
 * The run's HOME is a temporary one (issue 33, item 15: `npm test` never writes under the user's real
 * HOME), and the guard that fails the run when the real HOME changed sees every kind of change.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"
import { changes, snapshot } from "./support/homeGuard.js"

describe("the tests' HOME", () => {
  it("US-15 every test runs with a temporary HOME and no XDG directory of the user's", () => {
    const real = process.env["OCPOOL_REAL_HOME"]
    expect(real).toBeDefined()
    expect(process.env["HOME"]).not.toBe(real)
    expect(homedir()).toBe(process.env["HOME"])
    expect(process.env["HOME"]).toContain("ocpool-test-home-")
    for (const name of ["XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "OCPOOL_STATE_DIR"]) expect(process.env[name], name).toBeUndefined()
  })

  it("US-15 the guard names a file added, changed or removed under a watched folder, and ignores the rest", () => {
    const home = mkdtempSync(join(tmpdir(), "ocpool-guard-"))
    try {
      mkdirSync(join(home, ".local/state/opencode-pool"), { recursive: true })
      writeFileSync(join(home, ".local/state/opencode-pool/state.db"), "a")
      writeFileSync(join(home, ".bashrc"), "x")
      const before = snapshot(home)
      expect(changes(before, snapshot(home))).toEqual([])
      writeFileSync(join(home, ".bashrc"), "changed, not watched")
      writeFileSync(join(home, ".local/state/opencode-pool/state.db"), "ab")
      // another program's file: its own changes do not count, a mention of the project does
      writeFileSync(join(home, ".claude.json"), `{"projects": {}}`)
      mkdirSync(join(home, ".config/opencode"), { recursive: true })
      writeFileSync(join(home, ".config/opencode/opencode.json"), `{"plugin": ["file:///x/opencode-pool/dist/opencode-plugin.js"]}`)
      expect(changes(before, snapshot(home))).toEqual([
        `changed ${join(home, ".config/opencode/opencode.json")}`,
        `changed ${join(home, ".local/state/opencode-pool/state.db")}`
      ])
      writeFileSync(join(home, ".claude.json"), `{"mcpServers": {"ocpool": {"command": "ocpool", "args": ["mcp"]}}}`)
      expect(changes(before, snapshot(home))).toContain(`changed ${join(home, ".claude.json")}`)
      rmSync(join(home, ".local/state/opencode-pool"), { recursive: true })
      expect(changes(before, snapshot(home))).toContain(`removed ${join(home, ".local/state/opencode-pool/state.db")}`)
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  })
})
