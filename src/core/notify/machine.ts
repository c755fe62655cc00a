/**
 * The notification decisions (SPEC §10.1, §10.8) as a pure state machine: an input and the time it is
 * handled at give the next state and the effects to carry out (send, close a popup at a time, look a
 * session up, log). The plugin feeds it opencode's bus events synchronously, in arrival order
 * (`session.error` and the following `session.idle` arrive concurrently); a session whose place in its
 * tree is unknown defers its events until a lookup answers. Persistent maps keep each step cheap
 * whatever the number of sessions known.
 */
import { HashMap, HashSet, Option } from "effect"
import { notificationFor, type ContentInput, type Notification, type NotifyKind } from "./content.js"
import { headlineOf, switchNotification } from "./content.js"
import { fadeCloseAt } from "./fade.js"
import { NOTIFY_DEDUPE_MS, NOTIFY_KEYS_MAX } from "./limits.js"
import type { SessionFacts } from "../session/facts.js"
import { boundSessions, emptySessions, forgetSession, hasParent, knowsSession, placeOf, recordSession, sessionOf, type SessionStore } from "../session/store.js"

/** Sessions remembered at most (the oldest seen are forgotten first). */
export const NOTIFY_SESSIONS_MAX = 10_000
/** Events held for one session while it is looked up, and sessions held at most. */
export const DEFERRED_EVENTS_MAX = 32
export const DEFERRED_SESSIONS_MAX = 256
/** One opencode happening as the notification rules read it. */
export type NotifyInput =
  /** `session.created` / `session.updated`, or a lookup's answer. */
  | ({ readonly type: "session" } & SessionFacts)
  | { readonly type: "lookupFailed"; readonly id: string; readonly reason: string }
  | { readonly type: "deleted"; readonly id: string }
  | { readonly type: "busy"; readonly session: string }
  | { readonly type: "idle"; readonly session: string }
  | { readonly type: "error"; readonly session: string; readonly name?: string | undefined; readonly message?: string | undefined }
  | { readonly type: "question"; readonly session: string; readonly id: string; readonly texts: ReadonlyArray<string> }
  | { readonly type: "permission"; readonly session: string; readonly id: string; readonly permission?: string | undefined; readonly pattern?: string | undefined }
  /** `question.replied`, `question.rejected`, `permission.replied`; `id` undefined clears every ask of the session. */
  | { readonly type: "answered"; readonly session: string; readonly id?: string | undefined }
  /** `message.updated` with role `user`. */
  | { readonly type: "userMessage"; readonly session: string }
  /** A root session was switched to a fallback model (US-50); `text` is the engine's switch line. */
  | { readonly type: "switched"; readonly session: string; readonly text: string }

export type NotifyEffect =
  | { readonly type: "send"; readonly root: string; readonly notification: Notification }
  /** Close the popups raised for `root` so far, at `at` (never sooner than FADE_MIN_MS after the newest was raised, fade.ts). */
  | { readonly type: "close"; readonly root: string; readonly at: number }
  | { readonly type: "lookup"; readonly session: string }
  | { readonly type: "log"; readonly level: "debug" | "info" | "warn"; readonly message: string }

export interface NotifyConfig {
  /** Whether sounds play (option `sound` and `OCPOOL_SOUND`, SPEC §10.3). */
  readonly sounds: boolean
  /** Whether popups fade (option `fade`). */
  readonly fade: boolean
}

interface Ask {
  readonly session: string
  readonly root: string
  readonly askedAt: number
}

/** Pending asks remembered at most (the oldest are forgotten first: an ask never answered must not block `done` forever, nor grow memory). */
export const ASKS_MAX = NOTIFY_KEYS_MAX

export interface NotifyState {
  /** What each session's info said (core/session/store.ts), NOTIFY_SESSIONS_MAX at most. */
  readonly sessions: SessionStore
  /** Roots (and, harmlessly, any session) seen busy since their last idle. */
  readonly worked: HashSet.HashSet<string>
  /** Pending questions and permissions by request id. */
  readonly asks: HashMap.HashMap<string, Ask>
  /** Root → the ids of `asks` in its tree (so `done` and a root's error look at that tree only). */
  readonly pending: HashMap.HashMap<string, ReadonlyArray<string>>
  /** `kind\0root` → when it was last sent (dedupe). */
  readonly sent: HashMap.HashMap<string, number>
  /** Root → when its newest popup was raised (fade). */
  readonly raised: HashMap.HashMap<string, number>
  /** Unknown session → the events waiting for its lookup. */
  readonly deferred: HashMap.HashMap<string, ReadonlyArray<NotifyInput>>
}

export const initialNotifyState: NotifyState = {
  sessions: emptySessions,
  worked: HashSet.empty(),
  asks: HashMap.empty(),
  pending: HashMap.empty(),
  sent: HashMap.empty(),
  raised: HashMap.empty(),
  deferred: HashMap.empty()
}

export interface NotifyStep {
  readonly state: NotifyState
  readonly effects: ReadonlyArray<NotifyEffect>
}

/** The next state and the effects of one `notifyStep` call, built up as its input is handled; mutable only inside that call. */
class StepBuilder {
  readonly effects: Array<NotifyEffect> = []
  constructor(
    public state: NotifyState,
    readonly now: number,
    readonly config: NotifyConfig
  ) {}

  set<K extends keyof NotifyState>(key: K, value: NotifyState[K]): void {
    this.state = { ...this.state, [key]: value }
  }

  log(level: "debug" | "info" | "warn", message: string): void {
    this.effects.push({ type: "log", level, message })
  }

  titleOf(root: string): string | undefined {
    return sessionOf(this.state.sessions, root)?.title
  }

  /** Sends `kind` for `root` unless deduped (`error` never is). */
  send(kind: NotifyKind, root: string, content: ContentInput): void {
    const key = `${kind}\u0000${root}`
    if (kind !== "error") {
      const last = Option.getOrUndefined(HashMap.get(this.state.sent, key))
      if (last !== undefined && this.now - last < NOTIFY_DEDUPE_MS && this.now >= last) {
        this.log("debug", `notification ${kind} for ${root} dropped: the same was sent ${this.now - last} ms ago`)
        return
      }
      this.set("sent", boundSent(HashMap.set(HashMap.remove(this.state.sent, key), key, this.now), this.now))
    }
    this.effects.push({ type: "send", root, notification: notificationFor(kind, { ...content, sessionTitle: this.titleOf(root) }, this.config.sounds) })
    if (this.config.fade) this.set("raised", boundByAge(HashMap.set(HashMap.remove(this.state.raised, root), root, this.now), NOTIFY_KEYS_MAX))
  }

  /** The user worked in `root`'s chat: its popups close, never sooner than FADE_MIN_MS after the newest was raised. */
  fade(root: string): void {
    if (!this.config.fade) return
    const raisedAt = Option.getOrUndefined(HashMap.get(this.state.raised, root))
    if (raisedAt === undefined) return
    this.set("raised", HashMap.remove(this.state.raised, root))
    this.effects.push({ type: "close", root, at: fadeCloseAt(raisedAt, this.now) })
  }

  addAsk(id: string, ask: Ask): void {
    this.removeAsk(id)
    this.set("asks", HashMap.set(this.state.asks, id, ask))
    const ids = Option.getOrUndefined(HashMap.get(this.state.pending, ask.root)) ?? []
    this.set("pending", HashMap.set(this.state.pending, ask.root, [...ids, id]))
    if (HashMap.size(this.state.asks) > ASKS_MAX) {
      // the oldest fifth goes at once, so a flood of unanswered asks costs one sort per ASKS_MAX / 5 asks
      const oldest = Array.from(this.state.asks).sort((a, b) => a[1].askedAt - b[1].askedAt).slice(0, Math.ceil(ASKS_MAX / 5))
      this.log("debug", `forgot the ${oldest.length} oldest pending asks: more than ${ASKS_MAX} were pending`)
      for (const [old] of oldest) this.removeAsk(old)
    }
  }

  removeAsk(id: string): Ask | undefined {
    const ask = Option.getOrUndefined(HashMap.get(this.state.asks, id))
    if (ask === undefined) return undefined
    this.set("asks", HashMap.remove(this.state.asks, id))
    const ids = (Option.getOrUndefined(HashMap.get(this.state.pending, ask.root)) ?? []).filter((i) => i !== id)
    this.set("pending", ids.length > 0 ? HashMap.set(this.state.pending, ask.root, ids) : HashMap.remove(this.state.pending, ask.root))
    return ask
  }

  /** Drops the pending asks `gone` matches: in `root`'s tree, or (root unknown) anywhere. */
  dropAsks(root: string | undefined, gone: (a: Ask) => boolean): void {
    if (HashMap.size(this.state.asks) === 0) return
    const ids = root === undefined ? Array.from(HashMap.keys(this.state.asks)) : (Option.getOrUndefined(HashMap.get(this.state.pending, root)) ?? [])
    for (const id of ids) {
      const a = Option.getOrUndefined(HashMap.get(this.state.asks, id))
      if (a !== undefined && gone(a)) this.removeAsk(id)
    }
  }

  /** Holds `input` until `missing` is known, asking for a lookup the first time. */
  defer(missing: string, input: NotifyInput): void {
    const held = Option.getOrUndefined(HashMap.get(this.state.deferred, missing))
    if (held === undefined) {
      if (HashMap.size(this.state.deferred) >= DEFERRED_SESSIONS_MAX) {
        this.log("debug", `notification input for ${missing} dropped: too many sessions waiting for a lookup`)
        return
      }
      this.set("deferred", HashMap.set(this.state.deferred, missing, [input]))
      this.effects.push({ type: "lookup", session: missing })
      return
    }
    if (held.length >= DEFERRED_EVENTS_MAX) {
      this.log("debug", `notification input for ${missing} dropped: ${DEFERRED_EVENTS_MAX} already wait for its lookup`)
      return
    }
    this.set("deferred", HashMap.set(this.state.deferred, missing, [...held, input]))
  }
}

/** The dedupe memory kept to NOTIFY_KEYS_MAX: expired entries go first, then the oldest. */
const boundSent = (sent: HashMap.HashMap<string, number>, now: number): HashMap.HashMap<string, number> => {
  if (HashMap.size(sent) <= NOTIFY_KEYS_MAX) return sent
  let out = HashMap.filter(sent, (at) => now - at < NOTIFY_DEDUPE_MS && at <= now)
  if (HashMap.size(out) <= NOTIFY_KEYS_MAX) return out
  const byAge = Array.from(out).sort((a, b) => a[1] - b[1])
  for (const [k] of byAge.slice(0, HashMap.size(out) - NOTIFY_KEYS_MAX)) out = HashMap.remove(out, k)
  return out
}

/** At most `max` entries: the oldest values (times) go first. */
const boundByAge = (m: HashMap.HashMap<string, number>, max: number): HashMap.HashMap<string, number> => {
  if (HashMap.size(m) <= max) return m
  let out = m
  for (const [k] of Array.from(m).sort((a, b) => a[1] - b[1]).slice(0, HashMap.size(m) - max)) out = HashMap.remove(out, k)
  return out
}

/** Busy marks kept to NOTIFY_SESSIONS_MAX: past it, marks of sessions no longer remembered go (a child whose idle was never seen). */
const boundWorked = (worked: HashSet.HashSet<string>, sessions: SessionStore): HashSet.HashSet<string> => {
  if (HashSet.size(worked) <= NOTIFY_SESSIONS_MAX) return worked
  const known = HashSet.filter(worked, (s) => knowsSession(sessions, s))
  return HashSet.size(known) <= NOTIFY_SESSIONS_MAX ? known : HashSet.empty()
}

const apply = (d: StepBuilder, input: NotifyInput): void => {
  const s = d.state
  switch (input.type) {
    case "session": {
      // the sessions remembered kept to NOTIFY_SESSIONS_MAX: the oldest fifth seen goes when it is exceeded
      d.set("sessions", boundSessions(recordSession(s.sessions, input, d.now), NOTIFY_SESSIONS_MAX))
      const held = Option.getOrUndefined(HashMap.get(d.state.deferred, input.id))
      if (held !== undefined) {
        d.set("deferred", HashMap.remove(d.state.deferred, input.id))
        for (const e of held) apply(d, e)
      }
      return
    }
    case "lookupFailed": {
      const held = Option.getOrUndefined(HashMap.get(s.deferred, input.id))
      if (held === undefined) return
      d.set("deferred", HashMap.remove(s.deferred, input.id))
      d.log("debug", `no notification for ${held.length} event(s) of session ${input.id}: lookup failed: ${input.reason}`)
      return
    }
    case "deleted": {
      d.set("sessions", forgetSession(s.sessions, input.id))
      d.set("worked", HashSet.remove(s.worked, input.id))
      d.dropAsks(undefined, (a) => a.session === input.id || a.root === input.id)
      d.set("raised", HashMap.remove(s.raised, input.id))
      d.set("deferred", HashMap.remove(s.deferred, input.id))
      return
    }
    case "busy": {
      // behind events of this session that wait for its lookup: a busy after a queued idle starts a new turn
      if ((Option.getOrUndefined(HashMap.get(s.deferred, input.session))?.length ?? 0) > 0) return d.defer(input.session, input)
      d.set("worked", boundWorked(HashSet.add(s.worked, input.session), s.sessions))
      if (!knowsSession(s.sessions, input.session) && !HashMap.has(s.deferred, input.session) && HashMap.size(s.deferred) < DEFERRED_SESSIONS_MAX) {
        // learn where it sits before it idles; nothing waits on the answer
        d.set("deferred", HashMap.set(s.deferred, input.session, []))
        d.effects.push({ type: "lookup", session: input.session })
      }
      return
    }
    case "idle": {
      if (hasParent(s.sessions, input.session)) return d.set("worked", HashSet.remove(s.worked, input.session)) // a child never notifies for itself
      const p = placeOf(s.sessions, input.session)
      if (p._tag === "Unknown") return d.defer(p.missing, input)
      const worked = HashSet.has(s.worked, input.session)
      d.set("worked", HashSet.remove(s.worked, input.session))
      if (p.root !== input.session || p.context || !worked) return
      if (p.self.compacting) return d.log("debug", `no done for ${p.root}: it is compacting`)
      if (pendingIn(s, p.root)) return d.log("debug", `no done for ${p.root}: a question or permission is pending`)
      d.send("done", p.root, {})
      return
    }
    case "error": {
      if (hasParent(s.sessions, input.session)) {
        // a child never notifies for itself; its own asks end with it
        d.set("worked", HashSet.remove(s.worked, input.session))
        const p = placeOf(s.sessions, input.session)
        return d.dropAsks(p._tag === "Known" ? p.root : undefined, (a) => a.session === input.session)
      }
      const p = placeOf(s.sessions, input.session)
      if (p._tag === "Unknown") return d.defer(p.missing, input)
      // an error ends the turn: the idle that follows is not a finish, and the session's asks are gone
      d.set("worked", HashSet.remove(s.worked, input.session))
      const root = p.root === input.session
      d.dropAsks(p.root, (a) => a.session === input.session || root)
      if (!root || p.context) return
      if (input.name === "MessageAbortedError") return d.log("debug", `no notification for ${p.root}: aborted`)
      d.send("error", p.root, { errorMessage: input.message })
      return
    }
    case "question":
    case "permission": {
      const p = placeOf(s.sessions, input.session)
      if (p._tag === "Unknown") return d.defer(p.missing, input)
      if (p.context) return
      d.addAsk(input.id, { session: input.session, root: p.root, askedAt: d.now })
      if (input.type === "question") d.send("question", p.root, { headline: headlineOf(input.texts) })
      else d.send("permission", p.root, { permission: input.permission, pattern: input.pattern })
      return
    }
    case "answered": {
      const ask = input.id === undefined ? undefined : Option.getOrUndefined(HashMap.get(s.asks, input.id))
      if (ask === undefined) {
        // the ask it answers may still wait for a lookup: the answer waits behind it, in order
        const q = placeOf(s.sessions, input.session)
        if (q._tag === "Unknown" && HashMap.has(s.deferred, q.missing)) return d.defer(q.missing, input)
      }
      if (input.id === undefined) {
        const q = placeOf(s.sessions, input.session)
        d.dropAsks(q._tag === "Known" ? q.root : undefined, (a) => a.session === input.session)
      }
      else d.removeAsk(input.id)
      const p = ask === undefined ? placeOf(s.sessions, input.session) : undefined
      const root = ask?.root ?? (p?._tag === "Known" ? p.root : undefined)
      if (root !== undefined) d.fade(root)
      return
    }
    case "userMessage":
      d.fade(input.session)
      return
    case "switched": {
      if (hasParent(s.sessions, input.session)) return
      d.effects.push({ type: "send", root: input.session, notification: switchNotification(input.text, d.titleOf(input.session)) })
      return
    }
  }
}

const pendingIn = (s: NotifyState, root: string): boolean => HashMap.has(s.pending, root)

/** One input handled at `now`. */
export const notifyStep = (state: NotifyState, input: NotifyInput, now: number, config: NotifyConfig): NotifyStep => {
  const d = new StepBuilder(state, now, config)
  apply(d, input)
  return { state: d.state, effects: d.effects }
}
