/**
 * What a failed request said, gathered from every field a provider or opencode states (issue 19): the
 * error's name, its messages (top-level and nested), the values of its `type`, `code`, `status`,
 * `reason` and `__type` fields, the detail records (`RetryInfo`, `QuotaFailure`, `ErrorInfo`), the reset
 * fields of the body (`resets_in_seconds`, `resets_at`), the headers a body carries
 * (`error.metadata.headers`), and the request's URL. Classification (classify.ts) and stated resets
 * (reset.ts) read this view, never the raw text.
 *
 * Pure and bounded: JSON is parsed only from strings of at most VIEW_PARSE_MAX_CHARS, the walk visits
 * at most VIEW_NODES_MAX values to depth VIEW_DEPTH_MAX, each message is cut to BODY_TEXT_MAX
 * characters and the joined text to VIEW_TEXT_MAX. Nothing here throws on any input.
 */
import { BODY_TEXT_MAX } from "../constants.js"
import { isPlainObject, jsonTooDeep } from "../extract.js"
import { parseDuration, type Headers } from "./reset.js"

/** A string longer than this is not parsed as JSON (its first BODY_TEXT_MAX characters are read as text). */
export const VIEW_PARSE_MAX_CHARS = 32_768
/** The walk over parsed JSON stops after this many values. */
export const VIEW_NODES_MAX = 256
/** … and does not go deeper than this. */
export const VIEW_DEPTH_MAX = 8
/** At most this many headers are kept (names over 256 characters are skipped). */
export const VIEW_HEADERS_MAX = 100
/** The joined text that phrases are matched in is cut to this many characters. */
export const VIEW_TEXT_MAX = 8_192

export interface ErrorView {
  readonly status: number | undefined
  /** The error's name (`APIError`, `UnknownError`, …), when the text was an error object. */
  readonly name: string | undefined
  /** Messages, names and field values, one per line, in the order met (original case). */
  readonly text: string
  /** `text` lower-cased: what phrases are matched in. */
  readonly lower: string
  /** Lower-cased values of `type`, `code`, `status`, `reason`, `__type`, `error_code` fields and quota ids. */
  readonly values: ReadonlySet<string>
  /** Messages only (original case), for the body-text reset forms and the warnings' echo. */
  readonly messages: string
  /** `RetryInfo.retryDelay`, in ms. */
  readonly retryDelayMs: number | undefined
  /** A body's `resets_in_seconds` (or `reset_in_seconds`), in ms. */
  readonly resetsInMs: number | undefined
  /** A body's `resets_at` / `reset_at`: epoch seconds, epoch ms or an RFC 3339 string, as found. */
  readonly resetsAt: unknown
  /** The response headers (the line's), then any a body carries; names lower-cased, the first wins. */
  readonly headers: Headers | undefined
  /** The request URL's host (`data.metadata.url`), lower-cased. */
  readonly host: string | undefined
  /** Google's `QuotaFailure` quota ids (`GenerateRequestsPerMinutePerProjectPerModel-FreeTier`), lower-cased, in order (issue 35). */
  readonly quotaIds: ReadonlyArray<string>
  /**
   * The upstream a gateway relayed an error from (issue 35): a body's `metadata.provider_name` beside
   * the upstream's own error in `metadata.raw` (OpenRouter's shape, which opencode Go and zen share).
   */
  readonly upstream: string | undefined
}

export interface ViewInput {
  /** A recorded error text: an error object's JSON, a JSON message, or plain text. */
  readonly text: string
  readonly status?: number | undefined
  readonly headers?: Headers | undefined
  /** A raw response body known apart from `text` (a `retry` line's, from the response itself). */
  readonly body?: string | undefined
}

const MESSAGE_KEYS = new Set(["message", "Message", "detail", "error_description", "msg", "error_message", "errorMessage"])
const VALUE_KEYS = new Set(["type", "code", "status", "reason", "__type", "error_code", "errorCode", "error_type", "errorType", "quotaId", "quotaMetric"])
const RESETS_IN_KEYS = new Set(["resets_in_seconds", "reset_in_seconds"])
const RESETS_AT_KEYS = new Set(["resets_at", "reset_at"])

/** JSON from a string that looks like JSON, small enough and not too deep; otherwise undefined. */
const parseJson = (s: string): unknown => {
  if (s.length > VIEW_PARSE_MAX_CHARS) return undefined
  const t = s.trimStart()
  if (!(t.startsWith("{") || t.startsWith("["))) return undefined
  if (jsonTooDeep(t)) return undefined
  try {
    return JSON.parse(t) as unknown
  } catch {
    return undefined
  }
}

const cut = (s: string): string => (s.length > BODY_TEXT_MAX ? s.slice(0, BODY_TEXT_MAX) : s)

/** A message sent percent-encoded (xAI's `Incorrect%20API%20key`) is read decoded; anything else as it is. */
const decodeSpaces = (s: string): string => {
  if (!s.includes("%20")) return s
  try {
    return decodeURIComponent(s)
  } catch {
    return s.replaceAll("%20", " ")
  }
}

const hostOf = (url: unknown): string | undefined => {
  if (typeof url !== "string") return undefined
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/@?#]*@)?([^/:?#]+)/i.exec(url.slice(0, 2_048))
  return m === null ? undefined : m[1]!.toLowerCase()
}

/** Mutable only while one view is built. */
class Builder {
  readonly lines: Array<string> = []
  readonly messageLines: Array<string> = []
  readonly values = new Set<string>()
  readonly headers: Record<string, unknown> = {}
  length = 0
  nodes = 0
  retryDelayMs: number | undefined
  resetsInMs: number | undefined
  resetsAt: unknown
  host: string | undefined
  readonly quotaIds: Array<string> = []
  upstream: string | undefined

  line(s: string, message: boolean): void {
    const room = VIEW_TEXT_MAX - this.length
    if (room <= 0) return
    const t = decodeSpaces(cut(s)).trim().slice(0, room)
    if (t === "") return
    this.lines.push(t)
    if (message) this.messageLines.push(t)
    this.length += t.length + 1
  }

  value(v: unknown): void {
    if (typeof v === "string" && v.length <= 200 && v.trim() !== "") {
      this.values.add(v.trim().toLowerCase())
      this.line(v, false)
    } else if (typeof v === "number" && Number.isFinite(v)) this.values.add(String(v))
  }

  addHeaders(h: unknown): void {
    if (!isPlainObject(h)) return
    let n = 0
    for (const k of Object.keys(h)) {
      if (++n > VIEW_HEADERS_MAX) return
      if (k.length > 256) continue
      const name = k.toLowerCase()
      if (!(name in this.headers)) this.headers[name] = h[k]
    }
  }

  /** A string that may hold JSON (a body, a message): its JSON is walked, else it is a message. */
  textOrJson(s: string, depth: number): void {
    const parsed = parseJson(s)
    if (parsed !== undefined && depth < VIEW_DEPTH_MAX) this.walk(parsed, depth + 1)
    else this.line(s, true)
  }

  detail(d: Record<string, unknown>): void {
    const type = typeof d["@type"] === "string" ? d["@type"] : ""
    if (type.endsWith("RetryInfo") && this.retryDelayMs === undefined) {
      const delay = d.retryDelay
      const ms = typeof delay === "string" ? parseDuration(delay.slice(0, 64)) : isPlainObject(delay) ? Number(delay.seconds ?? 0) * 1_000 + Number(delay.nanos ?? 0) / 1e6 : Number.NaN
      if (Number.isFinite(ms)) this.retryDelayMs = ms
    }
  }

  walk(v: unknown, depth: number): void {
    if (++this.nodes > VIEW_NODES_MAX || depth > VIEW_DEPTH_MAX) return
    if (Array.isArray(v)) {
      for (const x of v) {
        if (this.nodes > VIEW_NODES_MAX) return
        this.walk(x, depth + 1)
      }
      return
    }
    if (!isPlainObject(v)) return
    if (typeof v["@type"] === "string") this.detail(v)
    for (const key of Object.keys(v)) {
      if (this.nodes > VIEW_NODES_MAX) return
      const x = v[key]
      if (MESSAGE_KEYS.has(key)) {
        if (typeof x === "string") this.textOrJson(x, depth)
        else this.walk(x, depth + 1)
      } else if (key === "error" || key === "errors" || key === "details" || key === "data" || key === "violations" || key === "cause") {
        if (typeof x === "string") this.textOrJson(x, depth)
        else this.walk(x, depth + 1)
      } else if (VALUE_KEYS.has(key)) {
        if (key === "quotaId" && typeof x === "string" && x.length <= 200 && this.quotaIds.length < 16) this.quotaIds.push(x.trim().toLowerCase())
        if (typeof x === "string" || typeof x === "number") this.value(x)
        else this.walk(x, depth + 1)
      } else if (key === "name" && typeof x === "string") {
        this.value(x)
      } else if (RESETS_IN_KEYS.has(key) && this.resetsInMs === undefined) {
        const n = typeof x === "number" ? x : typeof x === "string" && /^\s*\d+(\.\d+)?\s*$/.test(x) ? Number(x) : Number.NaN
        if (Number.isFinite(n)) this.resetsInMs = n * 1_000
      } else if (RESETS_AT_KEYS.has(key) && this.resetsAt === undefined && (typeof x === "number" || typeof x === "string")) {
        this.resetsAt = x
      } else if (key === "metadata" && isPlainObject(x)) {
        this.addHeaders(x.headers)
        if (this.host === undefined) this.host = hostOf(x.url)
        if (this.upstream === undefined && typeof x.provider_name === "string" && x.raw !== undefined && x.raw !== null) this.upstream = x.provider_name.slice(0, 200)
        if (typeof x.raw === "string") this.textOrJson(x.raw, depth)
        else if (x.raw !== undefined) this.walk(x.raw, depth + 1)
      } else if (key === "responseBody" && typeof x === "string") {
        this.textOrJson(x, depth)
      } else if (key === "quotaDimensions" || key === "quotaValue") {
        // named for completeness: the model a Gemini quota names is read from the quota id instead
      }
    }
  }
}

/** The view of one failed request (see the module comment). */
export const errorView = ({ body, headers, status, text }: ViewInput): ErrorView => {
  const b = new Builder()
  if (headers !== undefined) b.addHeaders(headers)
  const parsed = parseJson(text)
  let name: string | undefined
  if (isPlainObject(parsed)) {
    if (typeof parsed.name === "string") name = parsed.name.slice(0, 200)
    const data = parsed.data
    if (isPlainObject(data) && typeof data.responseHeaders === "object") b.addHeaders(data.responseHeaders)
    if (isPlainObject(data) && isPlainObject(data.metadata)) b.host = hostOf(data.metadata.url)
    b.walk(parsed, 0)
  } else if (parsed !== undefined) b.walk(parsed, 0)
  else b.line(text, true)
  if (body !== undefined) b.textOrJson(body, 0)
  const joined = b.lines.join("\n")
  return {
    status,
    name,
    text: joined,
    lower: joined.toLowerCase(),
    values: b.values,
    messages: b.messageLines.join("\n"),
    retryDelayMs: b.retryDelayMs,
    resetsInMs: b.resetsInMs,
    resetsAt: b.resetsAt,
    headers: Object.keys(b.headers).length === 0 ? undefined : b.headers,
    host: b.host,
    quotaIds: b.quotaIds,
    upstream: b.upstream
  }
}
