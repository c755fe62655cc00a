/**
 * The permits file `permits.json` (issue 21): `{"v":1,"entries":[…]}`, every budget's entries, held and
 * queued. Encoding picks the entry's own fields (a view's `gone` is never written); decoding is
 * tolerant: an entry that does not decode is skipped, a file that does not is a problem. Strings are
 * bounded (a reason is cut, an identity over its bound makes the entry invalid) and at most
 * PERMITS_MAX_ENTRIES entries are kept. Pure; the decoding uses effect/Schema.
 */
import { Either, Option, Schema } from "effect"
import { ID_MAX } from "../../core/extract.js"
import { jsonTooDeep } from "../../core/extract.js"
import type { PermitEntry, PermitHolder } from "../../core/permits/types.js"
import { Count, EpochMs, Pid } from "../../core/tolerant.js"

export const PERMITS_FILE = "permits.json"

/** Entries a permits file holds at most (a real one holds a few). */
export const PERMITS_MAX_ENTRIES = 10_000

/** A reason is cut to this many characters. */
export const PERMIT_REASON_MAX = 500

/** Ids, tokens and budget names longer than this make an entry invalid (the machine's are far shorter). */
export const PERMIT_NAME_MAX = 128

/** A host name longer than this makes an entry invalid (DNS allows 253). */
export const PERMIT_HOST_MAX = 255

/** The file is refused beyond this size: PERMITS_MAX_ENTRIES entries of the largest valid kind fit. */
export const PERMITS_FILE_MAX_BYTES = 32 << 20

const cut = (reason: string): string => (reason.length > PERMIT_REASON_MAX ? reason.slice(0, PERMIT_REASON_MAX) : reason)

const Bounded = (max: number) => Schema.String.pipe(Schema.minLength(1), Schema.maxLength(max))
const StartToken = Schema.NullOr(Schema.String.pipe(Schema.maxLength(32)))

const HolderJson = Schema.Struct({
  host: Schema.String.pipe(Schema.maxLength(PERMIT_HOST_MAX)),
  pid: Pid,
  startToken: StartToken,
  session: Schema.optional(Bounded(ID_MAX)),
  group: Schema.optional(Schema.Struct({ pgid: Pid, startToken: StartToken })),
  via: Schema.Literal("plugin", "run", "mcp")
})

const EntryJson = Schema.Struct({
  id: Bounded(PERMIT_NAME_MAX),
  token: Bounded(PERMIT_NAME_MAX),
  budget: Bounded(PERMIT_NAME_MAX),
  weight: Schema.Number.pipe(Schema.int(), Schema.between(1, Number.MAX_SAFE_INTEGER)),
  reason: Schema.String,
  holder: HolderJson,
  seq: Count,
  requestedAt: EpochMs,
  grantedAt: Schema.optional(EpochMs),
  seenAt: Schema.optional(EpochMs),
  ahead: Schema.optional(Count),
  headSince: Schema.optional(EpochMs)
})

const FileJson = Schema.Struct({ v: Schema.Literal(1), entries: Schema.Array(Schema.Unknown) })

const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(FileJson))
const decodeEntry = Schema.decodeUnknownOption(EntryJson)

const holderOf = (h: PermitHolder): PermitHolder => ({
  host: h.host,
  pid: h.pid,
  startToken: h.startToken,
  ...(h.session !== undefined ? { session: h.session } : {}),
  ...(h.group !== undefined ? { group: { pgid: h.group.pgid, startToken: h.group.startToken } } : {}),
  via: h.via
})

/** The entry's own fields, in a fixed order, its reason cut (what is written, and what a read gives back). */
export const entryOf = (e: PermitEntry): PermitEntry => ({
  id: e.id,
  token: e.token,
  budget: e.budget,
  weight: e.weight,
  reason: cut(e.reason),
  holder: holderOf(e.holder),
  seq: e.seq,
  requestedAt: e.requestedAt,
  ...(e.grantedAt !== undefined ? { grantedAt: e.grantedAt } : {}),
  ...(e.seenAt !== undefined ? { seenAt: e.seenAt } : {}),
  ...(e.ahead !== undefined ? { ahead: e.ahead } : {}),
  ...(e.headSince !== undefined ? { headSince: e.headSince } : {})
})

/** FIFO order: by seq (then id, so that a hand-edited file with equal seqs still reads the same everywhere). */
export const bySeq = <A extends PermitEntry>(entries: Iterable<A>): Array<A> => [...entries].sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))

/** The file's text: the entries as given (the caller keeps them within PERMITS_MAX_ENTRIES). */
export const encodePermits = (entries: ReadonlyArray<PermitEntry>): string => JSON.stringify({ v: 1, entries: entries.map(entryOf) })

export type DecodedPermits = { readonly _tag: "Entries"; readonly entries: ReadonlyArray<PermitEntry> } | { readonly _tag: "Unusable"; readonly reason: string }

/**
 * Parses a permits file: invalid entries, and any after the first with the same id or past
 * PERMITS_MAX_ENTRIES, are skipped; `Unusable` (with a one-line reason) when the file itself is not one.
 */
export const decodePermits = (text: string): DecodedPermits => {
  if (jsonTooDeep(text)) return { _tag: "Unusable", reason: "nested too deeply" }
  const file = decodeFile(text)
  if (Either.isLeft(file)) return { _tag: "Unusable", reason: text.trim() === "" ? "empty" : 'not a {"v":1,"entries":[…]} permits file' }
  const seen = new Set<string>()
  const entries: Array<PermitEntry> = []
  for (const raw of file.right.entries) {
    if (entries.length >= PERMITS_MAX_ENTRIES) break
    const decoded = decodeEntry(raw)
    if (Option.isNone(decoded) || seen.has(decoded.value.id)) continue
    seen.add(decoded.value.id)
    entries.push(entryOf(decoded.value))
  }
  return { _tag: "Entries", entries }
}
