/**
 * Fade (SPEC §10.8, US-30): the popups raised for a root close once the user works in that chat, never
 * sooner than FADE_MIN_MS after the newest was up. The machine dates the close from when it decided to
 * send; a slow hop may show the popup later, so the shell dates it again from when the send returned.
 * Over the ssh hop a close names only the key (`<host>:<root>`) and the desktop closes every popup
 * remembered under it: a popup raised while the root's close waits would go with the old ones, so there
 * a send waits behind the root's pending close. Pure.
 */
import type { ChannelName } from "./channel.js"

/** A popup stays up at least this long (SPEC §1). */
export const FADE_MIN_MS = 5_000

/** When the popups shown (newest) at `shownAt` may close, at `now` or later. */
export const fadeCloseAt = (shownAt: number, now: number): number => Math.max(now, shownAt + FADE_MIN_MS)

/** A send as the close reads it: whether it showed a popup, its id, and when it returned. */
export interface SentPopup {
  readonly ok: boolean
  readonly id?: number | undefined
  readonly doneAt: number
}

/** What a close closes: every id the sends gave, dated by the newest send that showed; `undefined` when none showed. */
export const popupsShown = (sends: ReadonlyArray<SentPopup>): { readonly shownAt: number; readonly ids: ReadonlyArray<number> } | undefined => {
  let shownAt: number | undefined
  const ids: Array<number> = []
  for (const s of sends) {
    if (s.ok) shownAt = Math.max(shownAt ?? s.doneAt, s.doneAt)
    if (s.id !== undefined) ids.push(s.id)
  }
  return shownAt === undefined ? undefined : { shownAt, ids }
}

/** Whether a send for a root waits behind the root's pending close: on the ssh hop, whose close names only the key. */
export const sendWaitsForClose = (channel: ChannelName): boolean => channel === "ssh"
