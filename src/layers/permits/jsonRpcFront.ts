/**
 * The JSON-RPC 2.0 front of `ocpool mcp` (issue 33): between the client's lines and the MCP server of
 * `@effect/ai`, whose RPC layer reads ids as integers, stops at a line it cannot parse, and leaves
 * batches, unknown methods and bad params without a proper answer. Every message is judged first
 * (core/mcp/jsonRpc.ts): what is valid goes on under an integer id of the front's own, what is not is
 * answered here; the server's answers get the client's id back (a string id stays a string), its errors
 * plain `{ code, message }`, and a batch's answers go out as one array once all of them are in.
 */
import { Effect, Sink, Stream } from "effect"
import { isRecord } from "../../core/json.js"
import { errorAnswer, INVALID_REQUEST, PARSE_ERROR, plainError, triage, type Methods } from "../../core/mcp/jsonRpc.js"

/** Where the front writes whole lines (the process's stdout). */
export interface LineWriter {
  readonly write: (text: string) => unknown
}

interface Batch {
  pending: number
  readonly answers: Array<unknown>
}

interface InFlight {
  readonly id: string | number
  readonly batch: Batch | undefined
}

export interface Front<E> {
  /** The lines the server reads: valid messages only, under the front's ids. */
  readonly input: Stream.Stream<Uint8Array, E>
  /** Where the server writes: its answers, rewritten for the client. */
  readonly output: Sink.Sink<void, Uint8Array | string>
}

const idKey = (id: string | number): string => `${typeof id}:${String(id)}`

export const jsonRpcFront = <E>(stdin: Stream.Stream<Uint8Array, E>, out: LineWriter, methods: Methods): Front<E> => {
  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  let next = 1
  const inFlight = new Map<number, InFlight>()
  const byClientId = new Map<string, number>()
  const send = (value: unknown) => void out.write(`${JSON.stringify(value)}\n`)

  const settle = (batch: Batch) => {
    if (batch.pending === 0 && batch.answers.length > 0) send(batch.answers)
  }

  /** The lines to forward for one message; answers made here go out (or into `batch`). */
  const take = (message: unknown, batch: Batch | undefined): Array<string> => {
    const t = triage(message, methods)
    switch (t._tag) {
      case "Answer":
        if (batch === undefined) send(t.answer)
        else batch.answers.push(t.answer)
        return []
      case "Drop":
        return []
      case "Response":
        return [JSON.stringify(t.message)]
      case "Notification": {
        if (t.method !== "notifications/cancelled") return [JSON.stringify(t.message)]
        // a cancel names the client's id of the request: the server knows it by the front's
        const params = isRecord(t.message.params) ? t.message.params : {}
        const target = typeof params.requestId === "string" || typeof params.requestId === "number" ? byClientId.get(idKey(params.requestId)) : undefined
        return target === undefined ? [] : [JSON.stringify({ ...t.message, params: { ...params, requestId: target } })]
      }
      case "Request": {
        const own = next++
        inFlight.set(own, { id: t.id, batch })
        byClientId.set(idKey(t.id), own)
        if (batch !== undefined) batch.pending++
        return [JSON.stringify({ ...t.message, id: own })]
      }
    }
  }

  const onLine = (line: string): Array<string> => {
    if (line.trim() === "") return []
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      send(errorAnswer(null, PARSE_ERROR, "Parse error: the line is not JSON"))
      return []
    }
    if (!Array.isArray(value)) return take(value, undefined)
    if (value.length === 0) {
      send(errorAnswer(null, INVALID_REQUEST, "Invalid Request: an empty batch"))
      return []
    }
    const batch: Batch = { pending: 0, answers: [] }
    const forward = value.flatMap((m) => take(m, batch))
    settle(batch)
    return forward
  }

  const onServerLine = (line: string) => {
    if (line.trim() === "") return
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      return void out.write(`${line}\n`)
    }
    if (!isRecord(message) || !("result" in message || "error" in message)) return void out.write(`${line}\n`)
    const plain = "error" in message ? { ...message, error: plainError(message.error) } : message
    const own = typeof message.id === "number" ? inFlight.get(message.id) : undefined
    if (own === undefined) return send(plain)
    inFlight.delete(message.id as number)
    if (byClientId.get(idKey(own.id)) === message.id) byClientId.delete(idKey(own.id))
    const answer = { ...plain, id: own.id }
    if (own.batch === undefined) return send(answer)
    own.batch.answers.push(answer)
    own.batch.pending--
    settle(own.batch)
  }

  let pendingOut = ""
  const output = Sink.forEach((chunk: Uint8Array | string) =>
    Effect.sync(() => {
      pendingOut += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true })
      for (let i = pendingOut.indexOf("\n"); i >= 0; i = pendingOut.indexOf("\n")) {
        const line = pendingOut.slice(0, i)
        pendingOut = pendingOut.slice(i + 1)
        onServerLine(line)
      }
    })
  )

  const input = stdin.pipe(
    Stream.decodeText(),
    Stream.splitLines,
    Stream.mapConcat((line) => onLine(line).map((l) => encoder.encode(`${l}\n`)))
  )
  return { input, output }
}
