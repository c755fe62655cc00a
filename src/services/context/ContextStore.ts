/**
 * The context map's records (epic G, US-20): a project's persisted record and the CLI's refresh
 * marker in the state directory, and the facts of the map's files in the project. The plugin's
 * refresh shell and `ocpool context` read and write them only through this service.
 */
import { Context, Data, type Effect } from "effect"
import type { MapFacts } from "../../core/context/mapFacts.js"
import type { ContextRecord } from "../../core/context/record.js"

/** A record or marker that could not be written: `path` the file (or the state directory), `reason` a short phrase. */
export class ContextStoreError extends Data.TaggedError("ContextStoreError")<{ readonly path: string; readonly reason: string }> {}

export interface ContextStoreService {
  /** The project's record, or `undefined` when there is none, it is unreadable, or it names another root. Never fails. */
  readonly load: (root: string) => Effect.Effect<ContextRecord | undefined>
  /** Writes the record whole (atomically, mode 0600) under its root's name. */
  readonly save: (record: ContextRecord) => Effect.Effect<void, ContextStoreError>
  /** When a refresh was queued for the project (the marker's `at`, or its mtime when the body is unreadable), or `undefined`. Never fails. */
  readonly queued: (root: string) => Effect.Effect<number | undefined>
  /** Removes the project's marker (the refresh that takes it is starting); silent when there is none. Never fails. */
  readonly takeQueued: (root: string) => Effect.Effect<void>
  /** Queues a refresh for the project's next idle: writes its marker. */
  readonly queue: (root: string, at: number) => Effect.Effect<void, ContextStoreError>
  /** The map's files as they are now in `<root>/.opencode/context/`. Never fails. */
  readonly mapFacts: (root: string) => Effect.Effect<MapFacts>
}

export class ContextStore extends Context.Tag("opencode-pool/ContextStore")<ContextStore, ContextStoreService>() {}
