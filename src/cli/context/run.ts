/**
 * `ocpool context status` and `ocpool context refresh` (epic G, US-20/US-22): a project's context map
 * as the plugin keeps it, and a refresh queued for the project's next idle. The project is a directory
 * (default: the current one) resolved to its real absolute path, the key of its record in the state
 * database; the records are read and written only through the ContextStore service, over the
 * shared-state port (a view's for status, a writer's for refresh).
 */
import { Clock, Console, Effect, Layer } from "effect"
import { realpathSync, statSync } from "node:fs"
import { resolve } from "node:path"
import { lastWritten } from "../../core/context/mapFacts.js"
import { MAP_MAX_BYTES_DEFAULT } from "../../core/context/map.js"
import { contextStatusLines, contextStatusView, type ChangedCount } from "../../core/context/view.js"
import { echo, printable, printableJson } from "../../core/printable.js"
import { ContextStoreShared } from "../../layers/context/ContextStoreShared.js"
import { ContextStore } from "../../services/context/ContextStore.js"
import { BadInput, PathUnusable } from "../errors.js"
import { cliWriterState } from "../shared/stateWriter.js"
import { openState, portOf } from "../stateView.js"
import { COOL_WAIT_MS } from "../cool.js"
import { gitChangedCount } from "./git.js"

export interface ContextFlags {
  readonly project: string | undefined
  readonly stateDir: string | undefined
}

export interface ContextStatusFlags extends ContextFlags {
  readonly json: boolean
  readonly maxBytes: string | undefined
}

/** The project's root: `--project` (or the current directory) as a real absolute path; a missing or non-directory one is exit 2. */
export const projectRoot = (flag: string | undefined): Effect.Effect<string, BadInput> =>
  Effect.suspend(() => {
    const named = flag === undefined ? "the current directory" : `--project ${echo(flag)}`
    if (flag === "") return Effect.fail(new BadInput({ message: "--project: an empty path", option: "--project", value: "" }))
    let root: string
    try {
      root = realpathSync(resolve(flag ?? process.cwd()))
      if (!statSync(root).isDirectory()) return Effect.fail(new BadInput({ message: `${named}: not a directory` }))
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      const reason = code === "ENOENT" ? "no such directory" : code === "ENOTDIR" ? "not a directory" : code === "EACCES" ? "permission denied" : String(code ?? e)
      return Effect.fail(new BadInput({ message: `${named}: ${reason}` }))
    }
    return Effect.succeed(root)
  })

/** `--max-bytes N`: a whole number of bytes, 1 or more (default: the budget the plugin recorded, else the option's default, 24 KiB). */
export const maxBytesOf = (flag: string | undefined, recorded?: number | null): Effect.Effect<number, BadInput> => {
  if (flag === undefined) return Effect.succeed(recorded ?? MAP_MAX_BYTES_DEFAULT)
  const n = /^\d{1,15}$/.test(flag) ? Number(flag) : NaN
  return n >= 1 ? Effect.succeed(n) : Effect.fail(new BadInput({ message: `--max-bytes ${echo(flag)}: a whole number of bytes, 1 or more`, option: "--max-bytes", value: flag }))
}

export const contextStatusRun = (flags: ContextStatusFlags) =>
  Effect.gen(function* () {
    const root = yield* projectRoot(flags.project)
    yield* maxBytesOf(flags.maxBytes)
    const state = yield* openState(flags.stateDir)
    const { facts, queuedAt, record } = yield* Effect.gen(function* () {
      const store = yield* ContextStore
      return { record: yield* store.load(root), facts: yield* store.mapFacts(root), queuedAt: yield* store.queued(root) }
    }).pipe(Effect.provide(ContextStoreShared.pipe(Layer.provide(portOf(state)))), Effect.scoped)
    const maxBytes = yield* maxBytesOf(flags.maxBytes, record?.maxBytes)
    const now = yield* Clock.currentTimeMillis
    const written = lastWritten(facts)
    const since = written === undefined ? undefined : Math.floor(written)
    const pending = record?.pending.length ?? 0
    const fromGit = since === undefined ? undefined : yield* gitChangedCount(root, since)
    const changed: ChangedCount = fromGit !== undefined && since !== undefined ? { source: "git", count: fromGit, since } : { source: "pending", count: pending, since: since ?? null }
    const view = contextStatusView({ root, facts, record, queuedAt, changed, maxBytes })
    if (flags.json) return yield* Console.log(printableJson(JSON.stringify(view)))
    yield* Console.log(contextStatusLines(view, now).map(printable).join("\n"))
  })

export const contextRefreshRun = (flags: ContextFlags) =>
  Effect.gen(function* () {
    const root = yield* projectRoot(flags.project)
    const now = yield* Clock.currentTimeMillis
    // written through the shared state, as the plugin reads it (a directory that cannot be used: exit 1, named)
    yield* Effect.flatMap(ContextStore, (store) => store.queue(root, now)).pipe(
      Effect.catchTag("ContextStoreError", () => Effect.void),
      Effect.provide(ContextStoreShared.pipe(Layer.provide(cliWriterState(flags.stateDir, COOL_WAIT_MS)))),
      Effect.scoped,
      Effect.catchTag("StateUnreadable", (e) => Effect.fail(new PathUnusable({ path: e.dir, reason: `cannot queue the refresh: ${e.reason}` })))
    )
    yield* Console.log(printable(`refresh queued for ${root}: it starts when a root session of opencode goes idle in that project`))
  })
