/**
 * The hooks of the features merged into one `Hooks` object. Each feature (`task.ts`, `bash.ts`, …) is a
 * function of the services it needs that returns its parts of opencode's hooks; where two features
 * take the same hook (`tool.execute.before`: the heavy bash gate, then the task routing), the merged
 * hook calls their parts in the order the features are listed, and a part that returns (or resolves)
 * `true` ends the call there: the parts after it are not called, as an early `return` did in the one
 * handler it replaces. A part may answer `false` synchronously (not its call), so a call that is not
 * its own costs no promise. A merged hook resolves to nothing.
 */
import type { Hooks } from "@opencode-ai/plugin"

/** `true`: the call ended in this part. */
export type Done = boolean | void

/** opencode's hooks that are functions, `dispose` aside (the runner's). */
type HookFns = { [K in keyof Hooks as K extends "dispose" ? never : NonNullable<Hooks[K]> extends (...args: never) => unknown ? K : never]-?: NonNullable<Hooks[K]> }
export type HookKey = keyof HookFns

export type Part<K extends HookKey> = (...args: Parameters<HookFns[K]>) => Promise<Done> | Done

/** One feature's parts of opencode's hooks; `tool`: the tools it adds. */
export type Parts = { readonly [K in HookKey]?: Part<K> } & { readonly tool?: Hooks["tool"] }

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

/** The features' parts as one `Hooks` object (without `dispose`), in the order given. */
export const mergeParts = (features: ReadonlyArray<Parts>): Hooks => {
  const byKey = new Map<string, Array<AnyPart>>()
  let tool: Hooks["tool"]
  for (const f of features) {
    for (const [key, value] of Object.entries(f)) {
      if (value === undefined) continue
      if (key === "tool") tool = { ...tool, ...(value as NonNullable<Hooks["tool"]>) }
      else byKey.set(key, [...(byKey.get(key) ?? []), value as AnyPart])
    }
  }
  const hooks: Record<string, unknown> = {}
  for (const [key, parts] of byKey) hooks[key] = chain(parts)
  if (tool !== undefined) hooks.tool = tool
  return hooks as Hooks
}
