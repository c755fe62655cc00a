/**
 * What git says changed in a project since a time (`ocpool context status`): the files of the commits
 * since then and the files modified or untracked now, read by argv (never a shell), bounded in time
 * and output, without taking git's optional locks. Anything that goes wrong (no git, not a
 * repository, a timeout) is `undefined`: the status then counts the pending paths instead.
 *
 * A read-only view runs nothing the project's own git config names (issue 33): a repository is other
 * people's code, and `core.fsmonitor`, hooks, pagers, external diffs and content filters are commands.
 * They are switched off on the command line (`-c` wins over every config file), the filters a
 * repository defines by name, and each call is bounded to GIT_TIMEOUT_MS (run by the process runner:
 * git and anything it started killed with SIGKILL past it).
 */
import { Effect } from "effect"
import { gitChangedPaths } from "../../core/context/view.js"
import { runArgv } from "../../layers/process/runner.js"

/** The longest one git call may take: the view answers from the pending paths past it. */
export const GIT_TIMEOUT_MS = 2_000
const MAX_OUTPUT = 32 << 20

/** What no config of the repository may turn on for these reads: commands, pagers, hooks. */
const SAFE = [
  "-c", "core.fsmonitor=false",
  "-c", "core.hooksPath=/dev/null",
  "-c", "core.pager=cat",
  "-c", "core.untrackedCache=false",
  "-c", "diff.external="
]

/** git's stdout, or undefined when it did not run, exited non-zero, ran out of time or said more than MAX_OUTPUT. */
const run = (cwd: string, args: ReadonlyArray<string>): Effect.Effect<string | undefined> =>
  Effect.map(
    runArgv("git", ["--no-pager", "-C", cwd, ...args], {
      timeoutMs: GIT_TIMEOUT_MS,
      maxBytes: MAX_OUTPUT,
      stderr: "ignore",
      env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat", PAGER: "cat", GIT_EXTERNAL_DIFF: "", LC_ALL: "C" }
    }),
    (r) => (r.code === 0 && r.truncated === undefined ? r.stdout : undefined)
  )

/** `-c filter.<name>.clean= …` for every content filter the repository's config defines (reading config runs nothing). */
const noFilters = (cwd: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(run(cwd, [...SAFE, "config", "--name-only", "--get-regexp", "^filter\\..*\\.(clean|smudge|process)$"]), (out) => {
    const names = new Set<string>()
    for (const line of (out ?? "").split("\n")) {
      const m = /^filter\.(.+)\.(clean|smudge|process)$/.exec(line.trim())
      if (m !== null) names.add(m[1]!)
    }
    return [...names].flatMap((n) => ["-c", `filter.${n}.clean=`, "-c", `filter.${n}.smudge=`, "-c", `filter.${n}.process=`, "-c", `filter.${n}.required=false`])
  })

/**
 * How many distinct project files (as the refresh queue names them: not in the map, not under a
 * skipped segment) git shows committed since `sinceMs`, or modified or untracked now; `undefined`
 * when `root` is not in a git repository or git cannot answer.
 */
export const gitChangedCount: (root: string, sinceMs: number) => Effect.Effect<number | undefined> = Effect.fnUntraced(function* (root: string, sinceMs: number) {
  const top = (yield* run(root, [...SAFE, "rev-parse", "--show-toplevel"]))?.replace(/\n$/, "")
  if (top === undefined || top === "") return undefined
  const safe = [...SAFE, ...(yield* noFilters(root))]
  const git = (cwd: string, args: ReadonlyArray<string>) => run(cwd, [...safe, ...args])
  // a repository without a commit yet has no log to read
  const hasHead = (yield* git(root, ["rev-parse", "--verify", "--quiet", "HEAD"])) !== undefined
  const log = hasHead ? yield* git(root, ["log", "--no-ext-diff", "--no-textconv", "-z", "--name-only", "--pretty=format:", `--since=@${Math.floor(sinceMs / 1000)}`, "--", "."]) : ""
  const status = yield* git(root, ["status", "--porcelain", "-z", "--untracked-files=all", "--", "."])
  if (log === undefined || status === undefined) return undefined
  return gitChangedPaths(root, top, log, status).size
})
