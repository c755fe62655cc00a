/**
 * The corpus of real provider error payloads (test/fixtures/provider-errors/, issue 19): each case as
 * opencode 1.18.33 would hand it to the plugin. An HTTP error becomes opencode's `APIError`
 * (`{name, data: {message, statusCode, isRetryable, responseHeaders, responseBody, metadata: {url}}}`),
 * an error inside a stream its `UnknownError` whose `data.message` is the error event's JSON.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

export interface CorpusCase {
  readonly id: string
  readonly source: string
  readonly published: string
  readonly model: string
  readonly url: string
  readonly transport: "http" | "stream"
  readonly now: string
  readonly status: number | null
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
  readonly expect: {
    readonly class: "rate_limit" | "quota" | "outage" | "unavailable" | "auth" | "entitlement" | "context_limit" | "none"
    readonly scope: "model" | "provider" | "free" | "upstream" | null
    readonly resetMs: number | null
    readonly credit?: boolean
    readonly why: string
  }
}

export interface CorpusFile {
  readonly provider: string
  readonly cases: ReadonlyArray<CorpusCase>
}

export const CORPUS_DIR = join(import.meta.dirname, "..", "fixtures", "provider-errors")

/** Every corpus file, in name order; `dir` for a caller bundled elsewhere (the benchmark). */
export const loadCorpus = (dir: string = CORPUS_DIR): ReadonlyArray<CorpusFile> =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as CorpusFile)

const rawBody = (body: unknown): string => (typeof body === "string" ? body : JSON.stringify(body))

/** The message the AI SDK puts on its error: the body's `error.message` / `message` / `error`, else the status text. */
const sdkMessage = (c: CorpusCase): string => {
  const b = c.body as { error?: unknown; message?: unknown } | string | null
  if (typeof b === "string") return b
  if (b !== null && typeof b === "object") {
    const e = b.error
    if (typeof e === "object" && e !== null && typeof (e as { message?: unknown }).message === "string") return (e as { message: string }).message
    if (typeof b.message === "string") return b.message
    if (typeof e === "string") return e
  }
  return c.status === null ? "Unknown error" : `HTTP ${c.status}`
}

/** The error object opencode publishes for the case, as JSON text (what a `limit` line's `text` holds). */
export const opencodeErrorText = (c: CorpusCase): string =>
  c.transport === "stream" || c.status === null
    ? JSON.stringify({ name: "UnknownError", data: { message: rawBody(c.body) } })
    : JSON.stringify({
        name: "APIError",
        data: {
          message: sdkMessage(c),
          statusCode: c.status,
          isRetryable: c.status === 408 || c.status === 409 || c.status === 429 || c.status >= 500,
          responseHeaders: c.headers,
          responseBody: rawBody(c.body),
          metadata: { url: c.url }
        }
      })

/** The message of the retry status opencode 1.18.33 publishes for a retryable case (as the e2e tests saw it). */
export const retryMessage = (c: CorpusCase): string => (rawBody(c.body).includes("FreeUsageLimitError") ? "Free usage exceeded, subscribe to Go" : sdkMessage(c))

export const rawBodyOf = rawBody
