/**
 * The context map's records on the shared-state port (issue 32; the map is issue 23's): a project's
 * record under `record:<root>` and the CLI's refresh marker under `queued:<root>`, in the `context`
 * table of state.db (or a fleet's PostgreSQL), written and read through `SharedState` like every
 * other shared record. The map's facts are `stat`s of `<root>/.opencode/context/*` (mapFacts.ts).
 * Reads never fail (a record that cannot be read is none); a write that cannot be made is logged by the
 * port, as every commit's.
 */
import { Clock, Effect, Layer } from "effect"
import { decodeQueued, decodeRecord, encodeQueued, encodeRecord, type ContextRecord } from "../../core/context/record.js"
import { ContextStore, type ContextStoreService } from "../../services/context/ContextStore.js"
import { SharedState, type SharedStateService } from "../../services/state/SharedState.js"
import { readMapFacts } from "./mapFacts.js"
import { traced } from "../hotPath.js"

export const recordKey = (root: string): string => `record:${root}`
export const queuedKey = (root: string): string => `queued:${root}`

const NEEDS = { context: true } as const

/** The service over `state`. */
export const contextStoreOver = (state: SharedStateService): ContextStoreService => {
  const entry = (key: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => state.read(now, NEEDS)).pipe(Effect.map((snap) => snap.context.find((e) => e.key === key)?.body))
  const change = (put: ReadonlyArray<{ readonly key: string; readonly body: string }>, remove: ReadonlyArray<string>) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => state.commit(now, { cool: [], uncool: [], context: { put, remove } }))
  return ContextStore.of({
    load: traced("ContextStore.load")((root: string) =>
      Effect.map(entry(recordKey(root)), (body) => {
        const record = body === undefined ? undefined : decodeRecord(body)
        // a record that names another root (a copied row) is not this one's
        return record !== undefined && record.root === root ? record : undefined
      })
    ),
    save: traced("ContextStore.save")((record: ContextRecord) => change([{ key: recordKey(record.root), body: encodeRecord(record) }], [])),
    queued: traced("ContextStore.queued")((root: string) => Effect.map(entry(queuedKey(root)), (body) => (body === undefined ? undefined : decodeQueued(body)))),
    takeQueued: traced("ContextStore.takeQueued")((root: string) => change([], [queuedKey(root)])),
    queue: traced("ContextStore.queue")((root: string, at: number) => change([{ key: queuedKey(root), body: encodeQueued(at) }], [])),
    mapFacts: traced("ContextStore.mapFacts")((root: string) => Effect.sync(() => readMapFacts(root)))
  })
}

/** The layer over the `SharedState` in context. */
export const ContextStoreShared = Layer.effect(ContextStore, Effect.map(SharedState, contextStoreOver))
