/** What a notification says (SPEC §10.2): title, message, urgency, icon and sound per kind. Pure. */
import { HEADLINE_MAX, MESSAGE_MAX, TITLE_MAX } from "./limits.js"
import type { Icon, Sound, Urgency } from "./sound.js"
import { capCodePoints, cleanText, firstLineOf } from "./text.js"

export type NotifyKind = "done" | "question" | "permission" | "error"

/** One notification, every field already cleaned, capped and whitelisted. */
export interface Notification {
  readonly kind: NotifyKind | "test" | "custom"
  readonly title: string
  readonly message: string
  readonly urgency: Urgency
  readonly icon: Icon
  readonly sound: Sound
}

const STYLE: Readonly<Record<NotifyKind, { readonly urgency: Urgency; readonly icon: Icon }>> = {
  done: { urgency: "normal", icon: "emblem-default" },
  question: { urgency: "normal", icon: "dialog-information" },
  permission: { urgency: "normal", icon: "dialog-warning" },
  error: { urgency: "critical", icon: "dialog-error" }
}

/** `opencode — <session title>`; an empty title is `session`. */
export const titleFor = (sessionTitle: string | undefined): string => {
  const t = cleanText(sessionTitle ?? "", TITLE_MAX)
  return capCodePoints(`opencode — ${t === "" ? "session" : t}`, TITLE_MAX)
}

/** The first question whose text is not blank, cleaned and capped at HEADLINE_MAX; `undefined` when all are blank. */
export const headlineOf = (texts: ReadonlyArray<string>): string | undefined => {
  for (const t of texts) {
    const h = cleanText(t, HEADLINE_MAX)
    if (h !== "") return h
  }
  return undefined
}

/** What each kind needs to say. */
export interface ContentInput {
  readonly sessionTitle?: string | undefined
  /** question: the headline (already from `headlineOf`). */
  readonly headline?: string | undefined
  /** permission: its name and first pattern. */
  readonly permission?: string | undefined
  readonly pattern?: string | undefined
  /** error: the error's message (its first line is shown). */
  readonly errorMessage?: string | undefined
}

const messageFor = (kind: NotifyKind, c: ContentInput): string => {
  switch (kind) {
    case "done":
      return "Finished — waiting for your review"
    case "question": {
      const h = c.headline === undefined ? "" : cleanText(c.headline, HEADLINE_MAX)
      return h === "" ? "Question waiting for your answer" : `Question: ${h}`
    }
    case "permission": {
      const name = cleanText(c.permission ?? "", MESSAGE_MAX)
      const pattern = cleanText(c.pattern ?? "", MESSAGE_MAX)
      const what = name === "" ? "a tool" : name
      return pattern === "" ? `Permission needed: ${what}` : `Permission needed: ${what} (${pattern})`
    }
    case "error": {
      const line = cleanText(firstLineOf(c.errorMessage ?? ""), MESSAGE_MAX)
      return line === "" ? "Failed" : `Failed: ${line}`
    }
  }
}

/** The notification of `kind` for a session; `sounds` false makes the sound `none` (SPEC §10.3). */
export const notificationFor = (kind: NotifyKind, c: ContentInput, sounds: boolean): Notification => ({
  kind,
  title: titleFor(c.sessionTitle),
  message: capCodePoints(messageFor(kind, c), MESSAGE_MAX),
  urgency: STYLE[kind].urgency,
  icon: STYLE[kind].icon,
  sound: sounds ? kind : "none"
})

/**
 * The message as sent over the hop: ` [<short hostname>]` appended (SPEC §10.2). The text before it is
 * capped so the suffix always fits in MESSAGE_MAX.
 */
export const withHostSuffix = (message: string, shortHost: string): string => {
  const host = cleanText(shortHost, 63)
  if (host === "") return message
  const suffix = ` [${host}]`
  const room = MESSAGE_MAX - Array.from(suffix).length
  return `${capCodePoints(message, room)}${suffix}`
}

/** The short host name: up to the first dot. */
export const shortHostname = (hostname: string): string => hostname.split(".")[0] ?? hostname

/**
 * The notice that a root session now runs on a fallback model (issue 12, US-50): informational, no
 * sound, and never faded by the "continue" message the switch itself sends.
 */
export const switchNotification = (text: string, sessionTitle: string | undefined): Notification => ({
  kind: "custom",
  title: titleFor(sessionTitle),
  message: cleanText(text, MESSAGE_MAX),
  urgency: "normal",
  icon: "dialog-information",
  sound: "none"
})
