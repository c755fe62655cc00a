/**
 * `popups.json` on the receiving desktop (SPEC §10.8), the pure part: which popup ids were raised under
 * which fade key, and when. A key may hold several ids (a root can have a question and a done popup
 * open at once). Entries older than POPUP_TTL_MS are dropped whenever the list is written, and the
 * list is capped (the oldest go first). Decoding never throws: anything damaged counts as empty.
 */
import { POPUP_TTL_MS } from "./limits.js"
import { keyOf } from "./payload.js"

export const POPUPS_FILE = "popups.json"
/** Entries kept at most (the oldest raised are dropped first). */
export const POPUPS_MAX = 1_000

export interface Popup {
  readonly key: string
  readonly id: number
  readonly raisedAt: number
}

const validId = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v > 0 && v <= 0xffffffff

const entryOf = (v: unknown): Popup | undefined => {
  if (typeof v !== "object" || v === null) return undefined
  const e = v as Record<string, unknown>
  const key = typeof e.key === "string" ? keyOf(e.key) : ""
  if (key === "" || key !== e.key || !validId(e.id) || typeof e.raisedAt !== "number" || !Number.isFinite(e.raisedAt)) return undefined
  return { key, id: e.id, raisedAt: e.raisedAt }
}

/** The entries of a `popups.json` text; a damaged text, or a damaged entry, counts as none. */
export const decodePopups = (text: string): ReadonlyArray<Popup> => {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return []
  }
  const list = typeof raw === "object" && raw !== null && Array.isArray((raw as { popups?: unknown }).popups) ? (raw as { popups: Array<unknown> }).popups : []
  return list.flatMap((v) => {
    const e = entryOf(v)
    return e === undefined ? [] : [e]
  })
}

/** Entries raised within POPUP_TTL_MS of `now`, the newest POPUPS_MAX, oldest first. */
export const prunePopups = (popups: ReadonlyArray<Popup>, now: number): ReadonlyArray<Popup> => {
  const live = popups.filter((p) => now - p.raisedAt < POPUP_TTL_MS)
  const sorted = [...live].sort((a, b) => a.raisedAt - b.raisedAt)
  return sorted.length > POPUPS_MAX ? sorted.slice(sorted.length - POPUPS_MAX) : sorted
}

/** The list with `id` remembered under `key` (an id already there is moved to the new time); an invalid key or id changes nothing. */
export const rememberPopup = (popups: ReadonlyArray<Popup>, key: string, id: number, raisedAt: number, now: number): ReadonlyArray<Popup> => {
  const k = keyOf(key)
  const kept = popups.filter((p) => !(p.key === k && p.id === id))
  return prunePopups(k === "" || k !== key || !validId(id) || !Number.isFinite(raisedAt) ? popups : [...kept, { key: k, id, raisedAt }], now)
}

/** The ids raised under `key` (oldest first) and the list without them. */
export const takePopups = (popups: ReadonlyArray<Popup>, key: string, now: number): { readonly ids: ReadonlyArray<number>; readonly rest: ReadonlyArray<Popup> } => {
  const live = prunePopups(popups, now)
  const k = keyOf(key)
  if (k === "") return { ids: [], rest: live }
  return { ids: live.filter((p) => p.key === k).map((p) => p.id), rest: live.filter((p) => p.key !== k) }
}

export const encodePopups = (popups: ReadonlyArray<Popup>): string =>
  JSON.stringify({ version: 1, popups: popups.map((p) => ({ key: p.key, id: p.id, raisedAt: p.raisedAt })) }) + "\n"
