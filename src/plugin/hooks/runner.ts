/**
 * How the hooks run. The features' parts (`task.ts`, `bash.ts`, …) are merged into one `Hooks` object:
 * each feature is a function of the services it needs that returns its parts of opencode's hooks; where
 * two features take the same hook (`tool.execute.after`: the permit, the claim, the context map's
 * edits), the merged hook calls their parts in the order the features are listed, and a part that
 * returns (or resolves) `true` ends the call there, as an early `return` did in one handler. A part
 * of `tool.execute.before`/`after` may name the tools it is for (`tools`): a call of another tool never
 * reaches it. A part may answer `false` synchronously (not its call), so a call that is not its own
 * costs no promise. A merged hook resolves to nothing.
 *
 * Every hook runs its effects on the plugin's runtime through the runner: caught whole (a failure or
 * defect is one `<what> failed: …` line of the app log, never an exception into opencode), and nothing
 * at all once the hooks are disposed.
 */
import type { Hooks } from "@opencode-ai/plugin"
import { Effect, type Either } from "effect"
import { field } from "../../core/extract.js"
import { causeLine } from "../../core/causeLine.js"
import type { LogAnnotations } from "../../core/engine/events.js"
import { logLine } from "../../layers/opencode/LoggerAppLog.js"
import type { LogLevel } from "../../services/opencode/AppLog.js"
import type { HookRuntime, HookServices } from "../compose.js"

export interface Runner {
  /** Whether `dispose` was called: the hooks then do nothing. */
  readonly disposed: () => boolean
  /** `eff` on the runtime, its failure logged as `<what> failed: …`; `undefined` when it failed or after dispose. */
  readonly run: <A>(eff: Effect.Effect<A, never, HookServices>, what: string) => Promise<A | undefined>
  /** `eff` on the runtime, synchronously, for the callers that cannot wait; `undefined` when it failed or after dispose. */
  readonly runNow: <A>(eff: Effect.Effect<A, never, HookServices>, what: string) => A | undefined
  /** `eff` as `run` runs it, as an effect: for a fiber that must check `disposed` when it gets there. */
  readonly guarded: <A, R>(eff: Effect.Effect<A, never, R>, what: string) => Effect.Effect<A | undefined, never, R>
  /** `eff`'s failure as a value (a refusal the hook throws), its defects dropped; `undefined` when the run itself failed. */
  readonly attempt: <A, E>(eff: Effect.Effect<A, E, HookServices>) => Promise<Either.Either<A | void, E> | undefined>
  /** A line of the app log (through `Effect.log*`, the runtime's logger), with its annotations when the hook knows any. */
  readonly log: (level: LogLevel, message: string, annotations?: LogAnnotations) => Promise<unknown>
  /** Ends the runtime once. */
  readonly dispose: () => Promise<void>
}

/** The runner of `runtime`, logging through the runtime's logger (its AppLog layer installs it). */
export const makeRunner = (runtime: HookRuntime): Runner => {
  let disposed = false
  const caught = <A, R>(eff: Effect.Effect<A, never, R>, what: string): Effect.Effect<A | undefined, never, R> =>
    eff.pipe(Effect.catchAllCause((cause) => Effect.as(Effect.logError(`${what} failed: ${causeLine(cause)}`), undefined)))
  const run = async <A>(eff: Effect.Effect<A, never, HookServices>, what: string): Promise<A | undefined> => {
    if (disposed) return undefined
    return runtime.runPromise(caught(eff, what)).catch(() => undefined)
  }
  return {
    disposed: () => disposed,
    run,
    runNow: (eff, what) => {
      if (disposed) return undefined
      try {
        return runtime.runSync(caught(eff, what))
      } catch {
        return undefined
      }
    },
    guarded: (eff, what) => Effect.suspend(() => (disposed ? Effect.succeed(undefined) : caught(eff, what))),
    attempt: (eff) => runtime.runPromise(eff.pipe(Effect.catchAllDefect(() => Effect.void), Effect.either)).catch(() => undefined),
    log: (level, message, annotations) => run(logLine(annotations === undefined ? { level, message } : { level, message, annotations }), "log"),
    dispose: async () => {
      if (disposed) return
      disposed = true
      await runtime.dispose().catch(() => undefined)
    }
  }
}

/** `true`: the call ended in this part. */
export type Done = boolean | void

/** opencode's hooks that are functions, `dispose` aside (the runner's). */
type HookFns = { [K in keyof Hooks as K extends "dispose" ? never : NonNullable<Hooks[K]> extends (...args: never) => unknown ? K : never]-?: NonNullable<Hooks[K]> }
export type HookKey = keyof HookFns

export type Part<K extends HookKey> = (...args: Parameters<HookFns[K]>) => Promise<Done> | Done

/** One feature's parts of opencode's hooks; `tool`: the tools it adds; `tools`: the only tools its `tool.execute.*` parts are for. */
export type Parts = { readonly [K in HookKey]?: Part<K> } & { readonly tool?: Hooks["tool"]; readonly tools?: ReadonlyArray<string> }

type AnyPart = (a: unknown, b: unknown) => Promise<Done> | Done

const isPromise = (r: Promise<Done> | Done): r is Promise<Done> => typeof r === "object" && r !== null

/** The parts of one hook as one handler: each in turn until one ends the call. */
const chain = (parts: ReadonlyArray<AnyPart>) =>
  async (a: unknown, b: unknown): Promise<void> => {
    for (const part of parts) {
      const r = part(a, b)
      if ((isPromise(r) ? await r : r) === true) return
    }
  }

const TOOL_HOOKS = new Set(["tool.execute.before", "tool.execute.after"])

/** A tool hook's parts chosen by the call's tool: the parts for that tool and those for every tool, in order. */
const byTool = (parts: ReadonlyArray<readonly [AnyPart, ReadonlyArray<string> | undefined]>) => {
  const named = new Set(parts.flatMap(([, tools]) => tools ?? []))
  const forAny = chain(parts.filter(([, tools]) => tools === undefined).map(([p]) => p))
  const forTool = new Map([...named].map((t) => [t, chain(parts.filter(([, tools]) => tools === undefined || tools.includes(t)).map(([p]) => p))] as const))
  return (a: unknown, b: unknown): Promise<void> => {
    const t = field(a, "tool")
    return (typeof t === "string" ? forTool.get(t) : undefined)?.(a, b) ?? forAny(a, b)
  }
}

/** The features' parts as one `Hooks` object (without `dispose`), in the order given. */
export const mergeParts = (features: ReadonlyArray<Parts>): Hooks => {
  const byKey = new Map<string, Array<readonly [AnyPart, ReadonlyArray<string> | undefined]>>()
  let tool: Hooks["tool"]
  for (const f of features) {
    for (const [key, value] of Object.entries(f)) {
      if (value === undefined || key === "tools") continue
      if (key === "tool") tool = { ...tool, ...(value as NonNullable<Hooks["tool"]>) }
      else byKey.set(key, [...(byKey.get(key) ?? []), [value as AnyPart, TOOL_HOOKS.has(key) ? f.tools : undefined] as const])
    }
  }
  const hooks: Record<string, unknown> = {}
  for (const [key, parts] of byKey) hooks[key] = TOOL_HOOKS.has(key) ? byTool(parts) : chain(parts.map(([p]) => p))
  if (tool !== undefined) hooks.tool = tool
  return hooks as Hooks
}
