/**
 * Each test file gets a HOME of its own (vitest setupFiles, after homeGuard.ts gave the run one): files
 * run side by side on several workers, and one file's `~/.config/opencode-pool` must not be another's.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"

const home = mkdtempSync(join(tmpdir(), "ocpool-test-home-"))
const before = process.env["HOME"]
process.env["HOME"] = home
afterAll(() => {
  if (before !== undefined) process.env["HOME"] = before
  rmSync(home, { recursive: true, force: true })
})
