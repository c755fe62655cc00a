/**
 * How the hints name `ocpool` when the CLI runs under `npx` (issue 33, item 10): npx puts a link to
 * this installation on the PATH it gives the CLI, which the person's shell does not have.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { installationRoot, invocationFacts, shellPath } from "../../../src/layers/install/installation.js"

describe("the shell's PATH", () => {
  it("US-15 under npx, the .bin folders npm put in front are not the shell's: the hint says npx ocpool inside the checkout", () => {
    const root = installationRoot()!
    const dir = mkdtempSync(join(tmpdir(), "ocpool-npx-"))
    try {
      const bin = join(dir, ".npm/_npx/5eec/node_modules/.bin")
      mkdirSync(bin, { recursive: true })
      symlinkSync(join(root, "bin/ocpool.js"), join(bin, "ocpool"))
      const path = `${bin}:${join(root, "node_modules/.bin")}:/usr/bin:/bin`
      // run by hand with that PATH, the link is on the shell's PATH: `ocpool`
      expect(invocationFacts({ PATH: path }, root, root)?.onPath).toBeDefined()
      // under npx (npm_command=exec), it is npm's: not on the shell's PATH
      const underNpx = { PATH: path, npm_command: "exec", npm_lifecycle_event: "npx" }
      expect(shellPath(underNpx)["PATH"]).toBe("/usr/bin:/bin")
      expect(invocationFacts(underNpx, root, root)?.onPath).toBeUndefined()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
