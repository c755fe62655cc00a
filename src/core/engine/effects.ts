/**
 * What the shell carries out for one event (issue 34): the engine's step returns its state, its lines
 * and decisions, its commit, and these tagged effects; the shell runs each through the runner its
 * feature registered (layers/pool/engineRunners.ts), one table by tag. Effects the hook itself carries
 * out, because it holds opencode's output object (the spawn's agent, a refusal, the coaching line, a
 * message's model), are in the list too; their runners do nothing in the engine.
 */

/** A `context_start` decision with what the shell needs to carry it out. */
export interface RefreshOrder {
  readonly run: string
  readonly claim: string
  /** The slot variant the spawn routed to (`context-<n>`), and its model. */
  readonly agent: string
  readonly model: string
  readonly title: string
  readonly prompt: string
}

/** A `switch` decision with what the shell needs to carry it out. */
export interface SwitchOrder {
  readonly session: string
  /** The model the episode started on (`from` is a fallback when that one ran out too). */
  readonly original: string
  readonly from: string
  readonly to: string
  readonly via: "abort" | "idle"
  /** The agent of the session's last user message, so "continue" runs as the same agent. */
  readonly agent: string | undefined
  readonly until: number
  /** `Switched to <to>: <from> hit its quota, resets <HH:MM>Z`: the log line and the notification's text. */
  readonly text: string
}

/** Abort a pooled session (hung, spinning, failing): its outcome comes back as an `aborted` event. */
export interface AbortEffect {
  readonly _tag: "Abort"
  readonly claim: string
  readonly session: string
}

/** Move a root session to a fallback model (US-50): abort or wait for idle, then prompt "continue". */
export interface SwitchEffect {
  readonly _tag: "Switch"
  readonly order: SwitchOrder
}

/** Start a context map refresh run (issue 23): its session created, bound, prompted. */
export interface RefreshEffect {
  readonly _tag: "Refresh"
  readonly order: RefreshOrder
}

/** The refresh machine's state changed: its record is saved; `started`: a run started (the CLI's ask is taken). */
export interface SaveContextEffect {
  readonly _tag: "SaveContext"
  readonly started: boolean
}

/** The `task` spawn runs as this pooled variant (the hook rewrites `subagent_type`). */
export interface RouteEffect {
  readonly _tag: "Route"
  readonly agent: string
}

/** The `task` spawn named a pool variant by hand: the hook refuses it (SPEC §6.3). */
export interface RefuseEffect {
  readonly _tag: "Refuse"
  readonly requested: string
  readonly base: string
}

/** The line to add to the request's system prompt (US-49). */
export interface CoachEffect {
  readonly _tag: "Coach"
  readonly line: string
}

/** The user message runs on this model instead of the one it named (US-50). */
export interface ModelEffect {
  readonly _tag: "Model"
  readonly model: string
}

/** Tell the user, as a notification, what the engine did in their session: a switch to a fallback (US-50). */
export interface AnnounceEffect {
  readonly _tag: "Announce"
  readonly session: string
  readonly text: string
}

/**
 * What a 429 teaches (issue 35): the models a rate-limit or quota cooling hit, and the reset their
 * provider stated (none when the window was the pool's own backoff). Learned in a turn of its own,
 * after the cooldown is written (core/engine/budget.ts).
 */
export interface LearnEffect {
  readonly _tag: "Learn"
  readonly models: ReadonlyArray<string>
  readonly resetAt?: number | undefined
}

/** Every effect; a new one is added here and registered with its runner in the shell's table. */
export type EngineEffect = AbortEffect | SwitchEffect | RefreshEffect | SaveContextEffect | RouteEffect | RefuseEffect | CoachEffect | ModelEffect | AnnounceEffect | LearnEffect

export type EffectTag = EngineEffect["_tag"]
export type EffectOf<T extends EffectTag> = Extract<EngineEffect, { readonly _tag: T }>

/** The effects of one tag, in the order the step produced them. */
export const effectsOf = <T extends EffectTag>(out: { readonly effects: ReadonlyArray<EngineEffect> } | undefined, tag: T): ReadonlyArray<EffectOf<T>> =>
  out === undefined ? [] : (out.effects.filter((e) => e._tag === tag) as Array<EffectOf<T>>)

/** The first effect of a tag (the hook's answers come one per event). */
export const effectOf = <T extends EffectTag>(out: { readonly effects: ReadonlyArray<EngineEffect> } | undefined, tag: T): EffectOf<T> | undefined =>
  out?.effects.find((e): e is EffectOf<T> => e._tag === tag)
