/**
 * `ocpool context status` reads git without running anything the project's own config names (issue 33
 * item 7): a hostile repository's `core.fsmonitor`, a content filter on every file and a pager leave no
 * trace; the count is still right.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gitChangedCount } from "../../src/cli/context/git.js"

const hasGit = (() => {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

describe("context status reads git read-only (issue 33)", () => {
  it.skipIf(!hasGit)("US-20 a repository whose config runs commands (core.fsmonitor, a clean filter on every file, a pager) runs none of them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-hostile-git-"))
    const marker = join(dir, "..", `${dir.split("/").pop()}-ran`)
    const evil = join(dir, "evil.sh")
    writeFileSync(evil, `#!/bin/sh\necho "$0 $*" >> ${marker}\nsleep 5\ncat\n`)
    chmodSync(evil, 0o755)
    const git = (...args: Array<string>) => execFileSync("git", ["-C", dir, ...args], { stdio: "ignore", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: dir } })
    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    writeFileSync(join(dir, "a.txt"), "one\n")
    git("add", "a.txt")
    git("commit", "-qm", "one")
    // the hostile part, after the commit (setting it up must not run it either)
    git("config", "core.fsmonitor", evil)
    git("config", "core.pager", evil)
    git("config", "filter.evil.clean", evil)
    git("config", "filter.evil.process", evil)
    writeFileSync(join(dir, ".gitattributes"), "* filter=evil\n")
    // same size, new mtime: git must look at the content to know (where a clean filter runs)
    writeFileSync(join(dir, "a.txt"), "two\n")
    utimesSync(join(dir, "a.txt"), new Date(), new Date(Date.now() + 5_000))
    writeFileSync(join(dir, "b.txt"), "new\n")
    const count = await Effect.runPromise(gitChangedCount(dir, Date.now() - 60_000))
    expect(existsSync(marker), "a command of the repository's config ran").toBe(false)
    // a.txt (committed and modified), b.txt and .gitattributes (untracked); evil.sh too
    expect(count).toBe(4)
  })
})
