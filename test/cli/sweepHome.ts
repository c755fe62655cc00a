/**
 * What the sweep CLI tests share (test/cli/sweep.test.ts, sweepBusy.slow.test.ts): the built CLI, and a
 * temporary home with an opencode database holding one old session (3 events) and one fresh one.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeAll } from "vitest"
import { OpencodeDb } from "../retention/opencodeDb.js"

export const root = new URL("../../", import.meta.url).pathname
export const cli = join(root, "bin/ocpool.js")
export const DAY = 86_400_000

/** Builds dist/ when it is missing, and removes each test's home after it (call once per file). */
export const sweepHomes = (): void => {
  beforeAll(() => {
    if (!existsSync(join(root, "dist/cli.js"))) execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })
  })
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
  })
}

const dirs: Array<string> = []

/** A temp home: an opencode database with one old session (3 events) and one fresh one, and a data dir. */
export const setup = () => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-sweep-cli-"))
  dirs.push(dir)
  const dataHome = join(dir, "data")
  mkdirSync(join(dataHome, "opencode"), { recursive: true })
  const db = join(dataHome, "opencode", "opencode.db")
  const o = new OpencodeDb(db)
  const now = Date.now()
  const old = o.session({ created: now - 40 * DAY, title: "old" })
  o.message(old, now - 40 * DAY)
  o.events(old, [now - 40 * DAY, now - 39 * DAY, now - 38 * DAY])
  const fresh = o.session({ created: now - DAY })
  o.events(fresh, [now - DAY])
  o.db.pragma("wal_checkpoint(TRUNCATE)")
  o.close()
  return { dir, dataHome, db, old, fresh }
}

export const bytes = (path: string) => readFileSync(path)
