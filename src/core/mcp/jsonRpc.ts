/**
 * JSON-RPC 2.0 as `ocpool mcp` speaks it to any client (issue 33): what each incoming message is, and
 * the error answers the specification names. Pure: the shell (layers/permits/jsonRpcFront.ts) parses
 * lines, forwards what is valid to the MCP server under ids of its own and writes the answers.
 *
 * - A line that is not JSON: -32700 with id null.
 * - Not a request object (no `jsonrpc: "2.0"`, a method that is not a string, an id that is neither a
 *   string, a number nor null): -32600, with the id when it is one.
 * - A method the server does not have: -32601 (a notification the server does not know: no answer).
 * - Params that do not fit the method, or nested deeper than MAX_PARAMS_DEPTH: -32602.
 * - A batch: each element as above, the answers in one array; an empty batch: -32600.
 */

import { isRecord } from "../json.js"

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const INTERNAL_ERROR = -32603

/** The deepest params a request may carry (this server's tools take flat arguments). */
export const MAX_PARAMS_DEPTH = 64

export type JsonRpcId = string | number | null

export interface ErrorObject {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

export interface ErrorAnswer {
  readonly jsonrpc: "2.0"
  readonly id: JsonRpcId
  readonly error: ErrorObject
}

/** What the server offers: its request and notification methods, and what a request's params must be. */
export interface Methods {
  readonly isRequest: (method: string) => boolean
  readonly isNotification: (method: string) => boolean
  /** Why `params` do not fit `method`; `undefined` when they do. */
  readonly paramsProblem: (method: string, params: unknown) => string | undefined
}

export type Triage =
  /** A request to forward; the answer goes back under `id`. */
  | { readonly _tag: "Request"; readonly id: string | number; readonly method: string; readonly message: Record<string, unknown> }
  /** A notification to forward (no answer). */
  | { readonly _tag: "Notification"; readonly method: string; readonly message: Record<string, unknown> }
  /** The client's answer to a request of the server's: forwarded as it is. */
  | { readonly _tag: "Response"; readonly message: Record<string, unknown> }
  /** Answered here, not forwarded. */
  | { readonly _tag: "Answer"; readonly answer: ErrorAnswer }
  /** Nothing to do: an unknown notification, or a request with id null (answered, never forwarded). */
  | { readonly _tag: "Drop"; readonly why: string }

export const errorAnswer = (id: JsonRpcId, code: number, message: string): ErrorAnswer => ({ jsonrpc: "2.0", id, error: { code, message } })

const usableId = (id: unknown): id is string | number | null => id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id))

/** How deeply `value` nests (a scalar: 0), counted without recursion, stopping past `limit`. */
export const depthOf = (value: unknown, limit = MAX_PARAMS_DEPTH): number => {
  let deepest = 0
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, d] = stack.pop()!
    if (typeof v !== "object" || v === null) continue
    const here = d + 1
    if (here > deepest) deepest = here
    if (deepest > limit) return deepest
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, here])
  }
  return deepest
}

/** What one parsed message (an element of a batch, or a line's whole value) is. */
export const triage = (message: unknown, methods: Methods): Triage => {
  if (!isRecord(message)) return { _tag: "Answer", answer: errorAnswer(null, INVALID_REQUEST, "Invalid Request: not a JSON-RPC object") }
  const hasId = "id" in message
  const id = hasId ? message.id : undefined
  if (hasId && !usableId(id)) return { _tag: "Answer", answer: errorAnswer(null, INVALID_REQUEST, "Invalid Request: the id must be a string, a number or null") }
  const answerId: JsonRpcId = hasId ? (id as JsonRpcId) : null
  if (message.jsonrpc !== "2.0") return { _tag: "Answer", answer: errorAnswer(answerId, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"') }
  if (!("method" in message)) {
    if (hasId && id !== null && ("result" in message || "error" in message)) return { _tag: "Response", message }
    return { _tag: "Answer", answer: errorAnswer(answerId, INVALID_REQUEST, "Invalid Request: no method") }
  }
  const method = message.method
  if (typeof method !== "string") return { _tag: "Answer", answer: errorAnswer(answerId, INVALID_REQUEST, "Invalid Request: the method must be a string") }
  if (!hasId) return methods.isNotification(method) ? { _tag: "Notification", method, message } : { _tag: "Drop", why: `unknown notification ${method}` }
  if (!methods.isRequest(method)) return { _tag: "Answer", answer: errorAnswer(answerId, METHOD_NOT_FOUND, `Method not found: ${method}`) }
  if (depthOf(message.params) > MAX_PARAMS_DEPTH) return { _tag: "Answer", answer: errorAnswer(answerId, INVALID_PARAMS, `Invalid params: nested deeper than ${MAX_PARAMS_DEPTH} levels`) }
  const problem = methods.paramsProblem(method, message.params)
  if (problem !== undefined) return { _tag: "Answer", answer: errorAnswer(answerId, INVALID_PARAMS, `Invalid params: ${problem}`) }
  // JSON-RPC allows a null id but then the answer cannot be told apart: answered as invalid
  if (id === null) return { _tag: "Answer", answer: errorAnswer(null, INVALID_REQUEST, "Invalid Request: a request needs a string or number id") }
  return { _tag: "Request", id: id as string | number, method, message }
}

/**
 * The server's error as JSON-RPC has it: `{ code, message }`, with what the MCP library wraps around
 * it (its cause) taken off: a failure keeps its own code and message, a defect is an internal error.
 */
export const plainError = (error: unknown): ErrorObject => {
  if (!isRecord(error)) return { code: INTERNAL_ERROR, message: "Internal error" }
  const data = error.data
  if (error._tag === "Cause" && isRecord(data)) {
    if (data._tag === "Fail" && isRecord(data.error) && typeof data.error.code === "number" && typeof data.error.message === "string")
      return { code: data.error.code, message: data.error.message }
    return { code: INTERNAL_ERROR, message: "Internal error" }
  }
  if (error._tag === "Defect") return { code: INTERNAL_ERROR, message: "Internal error" }
  if (typeof error.code === "number" && error.code !== 0 && typeof error.message === "string") return { code: error.code, message: error.message }
  return { code: INTERNAL_ERROR, message: "Internal error" }
}
