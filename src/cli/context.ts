/**
 * `ocpool context` (epic G): the project's context map.
 * - `context status [--project DIR] [--json] [--max-bytes N] [--state-dir DIR]`: the map's files, its size
 *   against the budget, what changed since it was last written, the pending paths and the runs.
 * - `context refresh [--project DIR] [--state-dir DIR]`: queue a refresh for the project's next idle.
 */
import { Command, Options } from "@effect/cli"
import { Option } from "effect"
import { contextRefreshRun, contextStatusRun } from "./context/run.js"
import { text } from "./shared/flags.js"
import { stateDirOption } from "./status.js"
import { commandGroup } from "./shared/commandGroup.js"

const projectFlag = text("project", "DIR", "The project (default: the current directory), taken as its real absolute path: the key of its record in the state directory")

export const contextStatusCommand = Command.make(
  "status",
  {
    project: projectFlag,
    json: Options.boolean("json").pipe(
      Options.withDescription(
        "One JSON object on stdout: root, mapDir, exists, files [{name, present, bytes, mtimeMs, manager}], totalBytes, maxBytes, overBudget, lastWrittenAt, changed {source, count, since}, pending {count, dropped, paths}, lastStartedAt, inFlight, lastRun, queuedAt, record (docs/CONTEXT-MAP.md)"
      )
    ),
    maxBytes: text(
      "max-bytes",
      "N",
      "The map's budget in bytes over the five files (default: the plugin option contextMap.maxBytes as the plugin recorded it in the project's record, else 24576, that option's default)"
    ),
    stateDir: stateDirOption
  },
  (a) =>
    contextStatusRun({ project: Option.getOrUndefined(a.project), json: a.json, maxBytes: Option.getOrUndefined(a.maxBytes), stateDir: Option.getOrUndefined(a.stateDir) })
).pipe(
  Command.withDescription(
    "Show the project's context map (.opencode/context/): each of the five files and manager.md with its size and age, or missing; the total against the budget, with a warning when it is over (the next refresh then asks to condense it); how many files changed since the map was last written (from git when the project is in a git repository: files committed since, modified or untracked, the map and skipped paths left out; otherwise the pending paths); the pending paths (the first 25); the refresh run in flight, the last run and its outcome; whether a refresh is queued. Exit 0; 2 when the project is not a directory or a flag is bad; 1 when the state directory cannot be found."
  )
)

export const contextRefreshCommand = Command.make(
  "refresh",
  { project: projectFlag, stateDir: stateDirOption },
  (a) => contextRefreshRun({ project: Option.getOrUndefined(a.project), stateDir: Option.getOrUndefined(a.stateDir) })
).pipe(
  Command.withDescription(
    "Queue a refresh of the project's context map: writes a marker in the state directory; the plugin starts the refresh when a root session of opencode goes idle in that project (the 10-minute spacing between runs does not apply to it) and removes the marker then. Nothing runs now. Exit 0; 2 when the project is not a directory or a flag is bad; 1 when the state directory cannot be found or the marker cannot be written."
  )
)

export const contextCommand = commandGroup("context", "The project's context map (.opencode/context/): show its state, or queue a refresh.", [contextStatusCommand, contextRefreshCommand])
