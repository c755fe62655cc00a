/**
 * What the hooks read from opencode's inputs (SPEC §6.3, §6.4, §7.1, §8.2). Pure and total: every read
 * goes through `extract.ts`, so a hostile input (throwing getters, Proxies, cycles, huge strings, wrong
 * types) gives nothing rather than an exception; unknown shapes give none. Bus events are read by the
 * one decoder (core/bus/decode.ts) and mapped to each machine's inputs by the bus hook (hooks/bus.ts)
 * and notifyEvents.ts; each tool's call is read by its own hook (hooks/task.ts, hooks/bash.ts).
 */
import { maybeTitleGenerator, type FirstLine } from "../core/session/titleGenerator.js"
import { field, text } from "../core/extract.js"

/** `provider/model` of an object with `providerID` and `modelKey` (`id` on a Model, `modelID` on a message). */
const modelName = (v: unknown, modelKey: "id" | "modelID"): string | undefined => {
  const provider = text(field(v, "providerID"))
  const id = text(field(v, modelKey))
  return provider === undefined || id === undefined || provider === "" || id === "" ? undefined : `${provider}/${id}`
}

/** A `chat.params` input: its session, and the model and agent of the request when readable. */
export const requestOf = (input: unknown): { readonly session: string; readonly model: string | undefined; readonly agent: string | undefined } | undefined => {
  const session = text(field(input, "sessionID"))
  return session === undefined ? undefined : { session, model: modelName(field(input, "model"), "id"), agent: text(field(input, "agent")) }
}

/**
 * A `chat.message` (US-50): the user message being created, its session, model and agent, and the
 * message object whose `model` a fallback rewrites; undefined when any of them cannot be read.
 */
export const userMessageOf = (
  input: unknown,
  output: unknown
): { readonly session: string; readonly model: string; readonly agent: string | undefined; readonly message: unknown } | undefined => {
  const session = text(field(input, "sessionID"))
  const message = field(output, "message")
  const model = modelName(field(message, "model"), "modelID") ?? modelName(field(input, "model"), "modelID")
  if (session === undefined || model === undefined) return undefined
  return { session, model, agent: text(field(message, "agent")) ?? text(field(input, "agent")), message }
}

/** `Array.isArray`, guarded: it throws on a revoked Proxy. */
const isArray = (v: unknown): boolean => {
  try {
    return Array.isArray(v)
  } catch {
    return false
  }
}

/**
 * Where a line is appended to an array: its `length`, read guarded, when that is an array index (an
 * integer from 0 to 2³² − 2) whose slot reads as empty; undefined for an unreadable, negative,
 * fractional, huge or non-number length, or one that lies short of the items (a Proxy's), where a
 * write would not append or would overwrite a line.
 */
export const appendIndex = (array: unknown): number | undefined => {
  const n = field(array, "length")
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 2 ** 32 - 2) return undefined
  try {
    return (array as Record<string, unknown>)[String(n)] === undefined ? n : undefined
  } catch {
    return undefined
  }
}

/** The first item of an array, read guarded. */
const firstLine = (array: unknown): FirstLine => {
  try {
    return { readable: true, value: (array as Array<unknown>)[0] }
  } catch {
    return { readable: false }
  }
}

/**
 * `experimental.chat.system.transform` (issue 12, US-49): the session, its `provider/model` and the
 * system array to add the coaching line to; undefined for a request without a session, the title
 * generator's (or one whose first line cannot be read), a system array whose end cannot be found, or
 * any other hostile shape. Total: every read is guarded.
 */
export const coachTarget = (input: unknown, output: unknown): { readonly session: string; readonly model: string; readonly system: unknown } | undefined => {
  const session = text(field(input, "sessionID"))
  const model = field(input, "model")
  const provider = text(field(model, "providerID"))
  const id = text(field(model, "id"))
  const system = field(output, "system")
  if (session === undefined || provider === undefined || id === undefined || !isArray(system)) return undefined
  const length = appendIndex(system)
  if (length === undefined) return undefined
  if (maybeTitleGenerator(length === 0 ? undefined : firstLine(system))) return undefined
  return { session, model: `${provider}/${id}`, system }
}
