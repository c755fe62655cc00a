/**
 * The context map's persisted record (epic G, US-20): one per project in the state directory,
 * `context.<key>.json` with `<key>` the project root encoded as cooldown files encode a model
 * (core/pool/cooldownFile.ts). It keeps the pending paths across an opencode restart, the run in flight and
 * the last run. A refresh asked for from the CLI is a separate marker, `context.<key>.queued`, so the
 * plugin, which rewrites the record, never clobbers it. Pure: encoding, tolerant decoding
 * (effect/Schema), file names; `now` is always passed in.
 */
import { Hash, Option, Schema } from "effect"
import { modelFileKey } from "../pool/cooldownFile.js"
import { STATE_FILE_MAX_BYTES } from "../readLimits.js"
import { EpochMs, orElse, Pid } from "../tolerant.js"
import { PENDING_MAX, type RefreshKind } from "./map.js"
import type { LastRun } from "./refresh.js"

// a run's outcome and the last run are the refresh machine's own types (refresh.ts)
export type { LastRun, RunOutcome } from "./refresh.js"

/** The refresh run that was started and has not ended yet. */
export interface InFlightRun {
  readonly run: string
  readonly kind: RefreshKind
  /** The opencode session of the run, once it was created. */
  readonly session: string | null
  readonly startedAt: number
  /** The pending paths the run took (put back when it fails). */
  readonly paths: ReadonlyArray<string>
  /** The host and process that started it (`pid` 0: unknown, from a file that lacked it). */
  readonly host: string
  readonly pid: number
}

export interface ContextRecord {
  /** The project root (absolute): the record of another root under the same name is not this one's. */
  readonly root: string
  readonly writtenAt: number
  /** Paths relative to the root, in arrival order, each once, at most PENDING_MAX. */
  readonly pending: ReadonlyArray<string>
  /** How many paths were not kept beyond PENDING_MAX (or beyond the file's size cap). */
  readonly dropped: number
  /** When the last run started (the 10-minute spacing counts from it). */
  readonly lastStartedAt: number | null
  readonly inFlight: InFlightRun | null
  readonly lastRun: LastRun | null
  /** The map's budget the plugin runs with (option `contextMap.maxBytes`), so `ocpool context status` judges by it; null when unknown. */
  readonly maxBytes: number | null
}

/** A project's record before anything happened in it. */
export const emptyRecord = (root: string): ContextRecord => ({
  root,
  writtenAt: 0,
  pending: [],
  dropped: 0,
  lastStartedAt: null,
  inFlight: null,
  lastRun: null,
  maxBytes: null
})

/** A state file name stays under this many characters (NAME_MAX is 255 bytes, and `.tmp` is added while writing). */
const KEY_MAX = 200

/**
 * The `<key>` of a project's files: the root as `modelFileKey` encodes it (`/home/u/p` →
 * `_2fhome_2fu_2fp`); a key that would make the name too long for the file system is cut and ends
 * with `-` and the root's hash in hex (the record names its root, so a clash reads as no record).
 */
export const projectFileKey = (root: string): string => {
  const key = modelFileKey(root)
  if (key.length <= KEY_MAX) return key
  return `${key.slice(0, KEY_MAX - 9)}-${(Hash.string(root) >>> 0).toString(16).padStart(8, "0")}`
}

/** `/home/u/p` → `context._2fhome_2fu_2fp.json`. */
export const recordFileName = (root: string): string => `context.${projectFileKey(root)}.json`

/** `/home/u/p` → `context._2fhome_2fu_2fp.queued`: the CLI's request for a refresh at the next idle. */
export const queueFileName = (root: string): string => `context.${projectFileKey(root)}.queued`

export const CONTEXT_RECORD_FILE = /^context\.[A-Za-z0-9._-]+\.json$/
export const CONTEXT_QUEUE_FILE = /^context\.[A-Za-z0-9._-]+\.queued$/

// ---------------------------------------------------------------------------------------------------
// encoding

const utf8Length = (s: string): number => new TextEncoder().encode(s).length

const body = (r: ContextRecord) =>
  JSON.stringify({
    version: 1,
    root: r.root,
    writtenAt: r.writtenAt,
    pending: r.pending,
    dropped: r.dropped,
    lastStartedAt: r.lastStartedAt,
    inFlight: r.inFlight,
    lastRun: r.lastRun,
    maxBytes: r.maxBytes
  })

/**
 * Paths cut from the end of `paths` until their JSON takes at most `excess` fewer bytes: the kept
 * ones and how many were cut.
 */
const cutPaths = (paths: ReadonlyArray<string>, excess: number): { readonly kept: ReadonlyArray<string>; readonly cut: number } => {
  let saved = 0
  let n = paths.length
  while (n > 0 && saved < excess) {
    n--
    saved += utf8Length(JSON.stringify(paths[n])) + 1
  }
  return { kept: paths.slice(0, n), cut: paths.length - n }
}

/**
 * The file body. A record is always readable back: one whose body would pass the state-file cap
 * (STATE_FILE_MAX_BYTES, only with thousands of very long paths) loses its newest pending paths, then
 * the in-flight run's last ones, each counted in `dropped`.
 */
export const encodeRecord = (r: ContextRecord): string => {
  const text = body(r)
  const size = utf8Length(text)
  if (size <= STATE_FILE_MAX_BYTES) return text
  // a margin for the digits `dropped` gains
  const excess = size - STATE_FILE_MAX_BYTES + 32
  const pending = cutPaths(r.pending, excess)
  const rest = excess - (utf8Length(JSON.stringify(r.pending)) - utf8Length(JSON.stringify(pending.kept)))
  const inFlight = r.inFlight !== null && rest > 0 ? cutPaths(r.inFlight.paths, rest) : undefined
  return body({
    ...r,
    pending: pending.kept,
    inFlight: r.inFlight === null || inFlight === undefined ? r.inFlight : { ...r.inFlight, paths: inFlight.kept },
    dropped: r.dropped + pending.cut + (inFlight?.cut ?? 0)
  })
}

// ---------------------------------------------------------------------------------------------------
// decoding

const Kind = Schema.Literal("update", "bootstrap")
const Outcome = Schema.Literal("ok", "unchanged", "failed")
const NonEmpty = Schema.String.pipe(Schema.minLength(1))
const Dropped = Schema.Number.pipe(Schema.int(), Schema.between(0, Number.MAX_SAFE_INTEGER))

/** A list of paths read tolerantly: non-strings and empty strings skipped, each path once, in order. */
const Paths = Schema.transform(Schema.Unknown, Schema.Array(Schema.String), {
  strict: true,
  decode: (u) => (Array.isArray(u) ? [...new Set(u.filter((p): p is string => typeof p === "string" && p.length > 0))] : []),
  encode: (a) => a
})

/** `run`, `kind` and `startedAt` are required; the rest takes its default. */
const InFlightJson = Schema.Struct({
  run: NonEmpty,
  kind: Kind,
  session: orElse(Schema.NullOr(NonEmpty), null),
  startedAt: EpochMs,
  paths: Paths,
  host: orElse(Schema.String, ""),
  pid: orElse(Schema.Union(Pid, Schema.Literal(0)), 0)
})

/** `run`, `kind`, `startedAt`, `endedAt` and `outcome` are required; the rest takes its default. */
const LastRunJson = Schema.Struct({
  run: NonEmpty,
  kind: Kind,
  startedAt: EpochMs,
  endedAt: EpochMs,
  outcome: Outcome,
  paths: orElse(Dropped, 0),
  reason: orElse(Schema.UndefinedOr(Schema.String), undefined)
})

/** A nested object read tolerantly: `null` when it is absent, null or unusable. */
const tolerantObject = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownOption(schema)
  return Schema.transform(Schema.Unknown, Schema.NullOr(Schema.typeSchema(schema)), {
    strict: true,
    decode: (u) => (u === null || u === undefined ? null : Option.getOrNull(decode(u))),
    encode: (a) => a
  })
}

/** `root` (an absolute path) is required; every other field takes its default when it is missing or bad. */
const RecordJson = Schema.parseJson(
  Schema.Struct({
    root: NonEmpty.pipe(Schema.filter((s) => s.startsWith("/") || /^[A-Za-z]:[\\/]/.test(s) || "an absolute path")),
    writtenAt: orElse(EpochMs, 0),
    pending: Paths,
    dropped: orElse(Dropped, 0),
    lastStartedAt: orElse(Schema.NullOr(EpochMs), null),
    inFlight: tolerantObject(InFlightJson),
    lastRun: tolerantObject(LastRunJson),
    maxBytes: orElse(Schema.NullOr(Schema.Int.pipe(Schema.between(1, Number.MAX_SAFE_INTEGER))), null)
  })
)

const decodeFile = Schema.decodeUnknownOption(RecordJson)

/**
 * A parsed record, or `undefined` when it is unusable (not JSON, not an object, no absolute `root`).
 * Pending paths beyond PENDING_MAX are counted in `dropped`. Never throws.
 */
export const decodeRecord = (text: string): ContextRecord | undefined => {
  const file = decodeFile(text)
  if (Option.isNone(file)) return undefined
  const r = file.value
  const over = Math.max(0, r.pending.length - PENDING_MAX)
  const inFlight: InFlightRun | null =
    r.inFlight === null ? null : { run: r.inFlight.run, kind: r.inFlight.kind, session: r.inFlight.session, startedAt: r.inFlight.startedAt, paths: r.inFlight.paths, host: r.inFlight.host, pid: r.inFlight.pid }
  const lastRun: LastRun | null =
    r.lastRun === null
      ? null
      : {
          run: r.lastRun.run,
          kind: r.lastRun.kind,
          startedAt: r.lastRun.startedAt,
          endedAt: r.lastRun.endedAt,
          outcome: r.lastRun.outcome,
          paths: r.lastRun.paths,
          ...(r.lastRun.reason !== undefined ? { reason: r.lastRun.reason } : {})
        }
  return {
    root: r.root,
    writtenAt: r.writtenAt,
    pending: over > 0 ? r.pending.slice(0, PENDING_MAX) : r.pending,
    dropped: Math.min(Number.MAX_SAFE_INTEGER, r.dropped + over),
    lastStartedAt: r.lastStartedAt,
    inFlight,
    lastRun,
    maxBytes: r.maxBytes
  }
}

// ---------------------------------------------------------------------------------------------------
// the refresh marker

/** The marker's body: `{"at":<ms>}`. */
export const encodeQueued = (at: number): string => JSON.stringify({ at })

const QueuedJson = Schema.parseJson(Schema.Struct({ at: EpochMs }))
const decodeQueuedFile = Schema.decodeUnknownOption(QueuedJson)

/** When the refresh was asked for, or `undefined` when the body is unusable (the store then uses the file's mtime). */
export const decodeQueued = (text: string): number | undefined => Option.getOrUndefined(Option.map(decodeQueuedFile(text), (q) => q.at))
