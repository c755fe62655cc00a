/**
 * A provider's budget endpoint over HTTP (issue 35, US-48): `GET <url>` with `Authorization: Bearer
 * <key>`, bounded by `timeoutMs` on the Effect clock (the request is aborted when it runs out) and by
 * KEY_ANSWER_MAX_BYTES of body; a 2xx answer is parsed as JSON and read by the endpoint's entry
 * (core/quota/keyEndpoints.ts). Every failure is a typed error without the key.
 */
import { Clock, Duration, Effect, Layer } from "effect"
import { describe, field, jsonTooDeep } from "../../core/extract.js"
import type { KeyEndpoint as Endpoint } from "../../core/quota/keyEndpoints.js"
import { KeyAnswerMalformed, KeyEndpoint, KeyReadRefused, KeyReadTimeout, KeyReadUnreachable } from "../../services/quota/KeyEndpoint.js"
import { traced } from "../hotPath.js"

/** How long one read may take, answer included. */
export const KEY_READ_TIMEOUT_MS = 5_000
/** How much of an answer is read: the real one is under 1 KiB. */
export const KEY_ANSWER_MAX_BYTES = 65_536

/** The first `max` bytes of a body as UTF-8 and whether it ended within them. */
const bodyText = async (response: Response, max: number): Promise<{ readonly text: string; readonly whole: boolean }> => {
  const reader = response.body?.getReader()
  if (reader === undefined) return { text: "", whole: true }
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const next = await reader.read()
    if (next.done) break
    chunks.push(next.value)
    size += next.value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => undefined)
      return { text: "", whole: false }
    }
  }
  return { text: new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks)), whole: true }
}

/** The cause's first line, with the system error's code when it has one (`fetch failed (ECONNREFUSED)`). */
const detailOf = (e: unknown): string => {
  const code = field(field(e, "cause"), "code")
  const text = describe(e)
  return typeof code === "string" && !text.includes(code) ? `${text} (${code})` : text
}

type Got = { readonly _tag: "Status"; readonly status: number } | { readonly _tag: "Body"; readonly text: string; readonly whole: boolean }

const get = (endpoint: Endpoint, apiKey: string) =>
  Effect.tryPromise({
    try: async (signal): Promise<Got> => {
      const r = await fetch(endpoint.url, { method: "GET", headers: { authorization: `Bearer ${apiKey}`, accept: "application/json" }, signal, redirect: "error" })
      if (r.status < 200 || r.status > 299) {
        await r.body?.cancel().catch(() => undefined)
        return { _tag: "Status", status: r.status }
      }
      return { _tag: "Body", ...(await bodyText(r, KEY_ANSWER_MAX_BYTES)) }
    },
    catch: (e) => new KeyReadUnreachable({ provider: endpoint.provider, detail: detailOf(e) }, true)
  })

/** The answer's JSON, or why there is none. */
const parsed = (text: string): { readonly json: unknown } | { readonly problem: string } => {
  if (jsonTooDeep(text)) return { problem: "nested too deeply" }
  try {
    return { json: JSON.parse(text) as unknown }
  } catch {
    return { problem: "not JSON" }
  }
}

export const KeyEndpointHttp = (timeoutMs: number = KEY_READ_TIMEOUT_MS): Layer.Layer<KeyEndpoint> =>
  Layer.succeed(KeyEndpoint, {
    read: traced("KeyEndpoint.read")(function* (endpoint: Endpoint, apiKey: string) {
      const { provider } = endpoint
      const got = yield* get(endpoint, apiKey).pipe(
        Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: () => new KeyReadTimeout({ provider, ms: timeoutMs }, true) })
      )
      if (got._tag === "Status") return yield* new KeyReadRefused({ provider, status: got.status }, true)
      if (!got.whole) return yield* new KeyAnswerMalformed({ provider, detail: `longer than ${KEY_ANSWER_MAX_BYTES} bytes` }, true)
      const answer = parsed(got.text)
      if ("problem" in answer) return yield* new KeyAnswerMalformed({ provider, detail: answer.problem }, true)
      // the answer's day ends at the next midnight of the clock the plugin runs on
      const reading = endpoint.read(answer.json, yield* Clock.currentTimeMillis)
      if (reading._tag === "Malformed") return yield* new KeyAnswerMalformed({ provider, detail: reading.reason }, true)
      return reading
    })
  })
