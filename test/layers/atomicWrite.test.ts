/** State files are written through `<name>.tmp` and a rename; a link planted at the `.tmp` name is never followed. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, readFileSync, readlinkSync, symlinkSync, writeFileSync, lstatSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { writeFileAtomic } from "../../src/layers/fs/atomicWrite.js"

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-atomic-"))

describe("atomic state-file writes", () => {
  it.live("US-9 a link planted at the .tmp name is removed, not written through; the file is whole and 0600", () =>
    Effect.sync(() => {
      const dir = tmp()
      const victim = join(tmp(), "victim.txt")
      writeFileSync(victim, "keep me")
      const path = join(dir, "cooldown.zen_2falpha.json")
      symlinkSync(victim, `${path}.tmp`)
      writeFileAtomic(path, '{"model":"zen/alpha"}')
      expect(readFileSync(victim, "utf8")).toBe("keep me")
      expect(readFileSync(path, "utf8")).toBe('{"model":"zen/alpha"}')
      expect(lstatSync(path).isSymbolicLink()).toBe(false)
      expect(statSync(path).mode & 0o777).toBe(0o600)
      expect(() => readlinkSync(`${path}.tmp`)).toThrow()
    })
  )

  it.live("US-9 a stale .tmp left by a crash does not stop the next write", () =>
    Effect.sync(() => {
      const dir = tmp()
      const path = join(dir, "claims.42.json")
      writeFileSync(`${path}.tmp`, "half")
      writeFileAtomic(path, "whole")
      expect(readFileSync(path, "utf8")).toBe("whole")
    })
  )
})
