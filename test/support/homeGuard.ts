/**
 * Every suite runs in a HOME of its own (issue 33, item 15): vitest's global setup gives the whole run
 * a temporary HOME and XDG directories, which every test and every child it starts inherits, and after
 * the run compares what the project could write under the real HOME (its own folders; in opencode's
 * config, the harness configs `init --mcp` edits and the ssh config `tunnel setup` edits, the mentions
 * of the project) with what it was before: a change fails the run, naming the paths
 * (`OCPOOL_HOME_GUARD=warn` only warns, for a developer whose own opencode runs the plugin meanwhile). `scripts/newcomer-check.sh` compares the real HOME the same way.
 */
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"

/** The project's own folders under a HOME: anything added, changed or removed in them counts. */
export const OWN = [".local/state/opencode-pool", ".local/share/opencode-pool", ".config/opencode-pool", ".cache/opencode-pool"]

/**
 * Other programs' files the project edits (opencode's config, the harness configs `init --mcp` edits,
 * the ssh config and key `tunnel setup` writes): only what concerns the project counts, how often each
 * mentions it, since their own programs change them at any time.
 */
export const SHARED = [
  ".config/opencode/opencode.json",
  ".config/opencode/opencode.jsonc",
  ".claude.json",
  ".codex/config.toml",
  ".cursor/mcp.json",
  ".ssh/config",
  ".ssh/ocpool_notify",
  ".ssh/ocpool_notify.pub"
]

const mentions = (path: string): string => {
  try {
    return `${(readFileSync(path, "utf8").match(/ocpool|opencode-pool/g) ?? []).length} mentions`
  } catch {
    // absent is the same as not mentioning the project
    return "0 mentions"
  }
}

/** Each file and directory under the project's folders with its size and modification time (bounded), and the mentions in the shared files. */
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
  for (const rel of OWN) visit(join(home, rel))
  for (const rel of SHARED) seen.set(join(home, rel), mentions(join(home, rel)))
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
    if (changed.length === 0) return
    // a developer whose own opencode runs the plugin while the tests run: say it, do not fail
    if (process.env["OCPOOL_HOME_GUARD"] === "warn") {
      process.stderr.write(`warning: the real HOME changed during the tests (OCPOOL_HOME_GUARD=warn):\n  ${changed.slice(0, 20).join("\n  ")}\n`)
      return
    }
    throw new Error(`the tests changed the real HOME (${realHome}); every test must use a temporary one (OCPOOL_HOME_GUARD=warn when your own opencode or ocpool ran meanwhile):\n  ${changed.slice(0, 20).join("\n  ")}`)
  }
}
