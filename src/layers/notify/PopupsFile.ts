/**
 * `popups.json` in the state directory of the receiving desktop (SPEC §10.8): the popups `ocpool
 * receive` raised, per fade key, so a later `close` payload can close them. Read through safeRead (a
 * damaged, strange or huge file counts as empty), written whole through a `.tmp` and a rename; expired
 * entries go on every write. Two receivers racing may lose one entry: that popup then simply stays.
 */
import { Clock, Effect, Schema } from "effect"
import { join } from "node:path"
import { STATE_FILE_MAX_BYTES } from "../../core/readLimits.js"
import { decodePopups, encodePopups, POPUPS_FILE, rememberPopup, takePopups, type Popup } from "../../core/notify/popups.js"
import { writeFileAtomic } from "../fs/atomicWrite.js"
import { readTextFile } from "../fs/safeRead.js"
import { prepareDir, resolveStateDir } from "../state/StateDirFile.js"

/** `popups.json` could not be written: the file and the cause (its errno code, else its text); `reason` is `<path>: <cause>`. */
export class PopupsWriteError extends Schema.TaggedError<PopupsWriteError>()("PopupsWriteError", {
  path: Schema.String,
  detail: Schema.String
}) {
  get reason(): string {
    return `${this.path}: ${this.detail}`
  }
  override get message(): string {
    return this.reason
  }
}

export interface PopupsFile {
  readonly path: string
  /** Remembers popup `id` under `key`, raised at `raisedAt` (ms). */
  readonly remember: (key: string, id: number, raisedAt: number) => Effect.Effect<void, PopupsWriteError>
  /** The ids remembered under `key`, which are forgotten; an unreadable file has none, a failed write is ignored. */
  readonly take: (key: string) => Effect.Effect<ReadonlyArray<number>>
}

/** Every entry of the file; anything but a readable regular file under the cap is empty. */
export const readPopups = (path: string): ReadonlyArray<Popup> => {
  try {
    const read = readTextFile(path, STATE_FILE_MAX_BYTES)
    return read._tag === "Text" ? decodePopups(read.text) : []
  } catch {
    return []
  }
}

const errorText = (e: unknown): string => (e as NodeJS.ErrnoException | undefined)?.code ?? String(e)

/** The file `popups.json` in `dir`. */
export const makePopupsFile = (dir: string): PopupsFile => {
  const path = join(dir, POPUPS_FILE)
  return {
    path,
    remember: (key, id, raisedAt) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.try({
          try: () => writeFileAtomic(path, encodePopups(rememberPopup(readPopups(path), key, id, raisedAt, now))),
          catch: (e) => new PopupsWriteError({ path, detail: errorText(e) })
        })
      ),
    take: (key) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          const all = readPopups(path)
          const { ids, rest } = takePopups(all, key, now)
          if (rest.length !== all.length) {
            try {
              writeFileAtomic(path, encodePopups(rest))
            } catch {
              // closing still goes ahead; the entries expire by themselves
            }
          }
          return ids
        })
      )
  }
}

export type PopupsOpen = { readonly _tag: "Open"; readonly file: PopupsFile } | { readonly _tag: "Unusable"; readonly reason: string }

/** `popups.json` in this user's state directory (`OCPOOL_STATE_DIR`, else the XDG default), created 0700 when absent. */
export const openPopupsFile = (env: NodeJS.ProcessEnv = process.env): PopupsOpen => {
  const choice = resolveStateDir(undefined, env)
  if (choice._tag === "NoHome") return { _tag: "Unusable", reason: `state dir unusable (${choice.reason})` }
  const prepared = prepareDir(choice.dir)
  return prepared.unusable === undefined ? { _tag: "Open", file: makePopupsFile(choice.dir) } : { _tag: "Unusable", reason: `state dir ${choice.dir} unusable (${prepared.unusable})` }
}
