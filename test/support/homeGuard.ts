/**
 * Every suite runs in a HOME of its own (issue 33, item 15): vitest's global setup gives the whole run
 * a temporary HOME and XDG directories, which every test and every child it starts inherits, and after
 * the run compares what the project could write under the real HOME (opencode's and ocpool's folders,
 * the harness configs `init --mcp` edits, the ssh config `tunnel setup` edits) with what it was before:
 * a change fails the run, naming the paths. `scripts/fresh-home-check.sh` holds the demo to the same.
 */
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"

/** What the project could write under a HOME. */
export const WATCHED = [
  ".local/state/opencode-pool",
  ".local/state/opencode",
  ".local/share/opencode",
  ".local/share/opencode-pool",
  ".config/opencode",
  ".config/opencode-pool",
  ".cache/opencode",
  ".cache/opencode-pool",
  ".claude.json",
  ".codex",
  ".cursor",
  ".ssh"
]

/** Each file and directory under the watched paths with its size and modification time (bounded). */
export const snapshot = (home: string, limit = 20_000): ReadonlyMap<string, string> => {
  const seen = new Map<string, string>()
  const visit = (path: string): void => {
    if (seen.size >= limit) return
    let st
    try {
      st = lstatSync(path)
    } catch {
      return
    }
    seen.set(path, st.isDirectory() ? "dir" : `${st.size}:${st.mtimeMs}`)
    if (!st.isDirectory()) return
    let names: Array<string> = []
    try {
      names = readdirSync(path)
    } catch {
      return
    }
    for (const name of names) visit(join(path, name))
  }
  for (const rel of WATCHED) visit(join(home, rel))
  return seen
}

/** The paths added, removed or changed between two snapshots. */
export const changes = (before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const [path, v] of after) if (before.get(path) !== v) out.push(`${before.has(path) ? "changed" : "added"} ${path}`)
  for (const path of before.keys()) if (!after.has(path)) out.push(`removed ${path}`)
  return out.sort()
}

const XDG = ["XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"] as const

/** vitest globalSetup: a temporary HOME for the run; the run fails if the real HOME changed under it. */
export default function setup(): () => void {
  // once per run: each project of a config runs the global setup again, in the same process
  if (process.env["OCPOOL_REAL_HOME"] !== undefined && process.env["HOME"]?.includes("ocpool-test-home-")) return () => {}
  const realHome = process.env["HOME"] ?? homedir()
  const before = snapshot(realHome)
  const fake = mkdtempSync(join(tmpdir(), "ocpool-test-home-"))
  process.env["OCPOOL_REAL_HOME"] = realHome
  process.env["HOME"] = fake
  for (const name of XDG) delete process.env[name]
  delete process.env["OCPOOL_STATE_DIR"]
  delete process.env["OCPOOL_STATE_URL"]
  return () => {
    process.env["HOME"] = realHome
    const changed = changes(before, snapshot(realHome))
    if (existsSync(fake)) rmSync(fake, { recursive: true, force: true })
    if (changed.length > 0)
      throw new Error(`the tests changed the real HOME (${realHome}); every test must use a temporary one:\n  ${changed.slice(0, 20).join("\n  ")}`)
  }
}
