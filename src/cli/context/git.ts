/**
 * What git says changed in a project since a time (`ocpool context status`): the files of the commits
 * since then and the files modified or untracked now, read by argv (never a shell), bounded in time
 * and output, without taking git's optional locks. Anything that goes wrong (no git, not a
 * repository, a timeout) is `undefined`: the status then counts the pending paths instead.
 */
import { spawnSync } from "node:child_process"
import { gitChangedPaths } from "../../core/context/view.js"

const TIMEOUT_MS = 10_000
const MAX_OUTPUT = 32 << 20

/** git's stdout, or undefined when it did not run or exited non-zero. */
const git = (cwd: string, args: ReadonlyArray<string>): string | undefined => {
  try {
    const r = spawnSync("git", ["-C", cwd, ...args], {
      encoding: "utf8",
      timeout: TIMEOUT_MS,
      maxBuffer: MAX_OUTPUT,
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" }
    })
    return r.error === undefined && r.status === 0 ? r.stdout : undefined
  } catch {
    return undefined
  }
}

/**
 * How many distinct project files (as the refresh queue names them: not in the map, not under a
 * skipped segment) git shows committed since `sinceMs`, or modified or untracked now; `undefined`
 * when `root` is not in a git repository or git cannot answer.
 */
export const gitChangedCount = (root: string, sinceMs: number): number | undefined => {
  const top = git(root, ["rev-parse", "--show-toplevel"])?.replace(/\n$/, "")
  if (top === undefined || top === "") return undefined
  // a repository without a commit yet has no log to read
  const hasHead = git(root, ["rev-parse", "--verify", "--quiet", "HEAD"]) !== undefined
  const log = hasHead ? git(root, ["log", "-z", "--name-only", "--pretty=format:", `--since=@${Math.floor(sinceMs / 1000)}`, "--", "."]) : ""
  const status = git(root, ["status", "--porcelain", "-z", "--untracked-files=all", "--", "."])
  if (log === undefined || status === undefined) return undefined
  return gitChangedPaths(root, top, log, status).size
}
