/**
 * Limit classification (SPEC §7.1, §7.3) and the text it reads.
 * Ordered rows; the first matching row wins.
 */
import { BODY_TEXT_MAX } from "./constants.js"
import { isRecord } from "./json.js"
import { matches, phraseMatcher } from "./phrase.js"

export type LimitClass = "context_limit" | "auth" | "unavailable" | "quota" | "rate_limit" | "outage"

const CONTEXT = phraseMatcher(["context limit", "context length", "context window", "maximum context", "prompt is too long", "ContextOverflowError"])
const AUTH = phraseMatcher(["invalid api key", "ProviderAuthError"])
const UNAVAILABLE = phraseMatcher(["model not found", "ProviderModelNotFoundError", "model is unavailable", "no such model"])
const QUOTA = phraseMatcher(["quota", "usage limit", "free usage", "free tier limit", "free limit"])
const RATE = phraseMatcher(["rate limit", "too many requests", "limit reached", "rate increased too quickly"])
const OUTAGE = phraseMatcher(["overloaded", "upstream", "temporarily unavailable", "service unavailable", "bad gateway", "gateway timeout"])
/** Texts that make a limit provider-wide (SPEC §7.4). */
const PROVIDER_WIDE = phraseMatcher(["FreeUsageLimitError", "GoUsageLimitError", "free usage", "free tier limit"])

const OUTAGE_STATUSES = new Set([500, 502, 503, 504, 529])

export interface ClassifyInput {
  /** The classification text (see `classificationText`). */
  readonly text: string
  readonly status?: number | undefined
  /** The attributed model, `provider/model-id`, for the 404 row. */
  readonly model?: string | undefined
}

/** SPEC §7.3. `undefined` means "not a limit". */
export const classify = ({ model, status, text }: ClassifyInput): LimitClass | undefined => {
  const lower = text.toLowerCase()
  if (matches(CONTEXT, lower)) return "context_limit"
  if (matches(AUTH, lower)) return "auth"
  if (matches(UNAVAILABLE, lower)) return "unavailable"
  if (matches(QUOTA, lower)) return "quota"
  if (status === 429 || matches(RATE, lower)) return "rate_limit"
  if ((status !== undefined && OUTAGE_STATUSES.has(status)) || matches(OUTAGE, lower)) return "outage"
  if (status === 401 || status === 403) return "auth"
  if (status === 404 && model !== undefined) {
    const id = model.slice(model.indexOf("/") + 1).toLowerCase()
    if (id !== "" && lower.includes(id)) return "unavailable"
  }
  return undefined
}

/** Whether the text asks for provider scope on its own (SPEC §7.4). */
export const isProviderWideText = (text: string): boolean => matches(PROVIDER_WIDE, text.toLowerCase())

const parseJson = (text: string): unknown => {
  const t = text.trimStart()
  if (!(t.startsWith("{") || t.startsWith("["))) return undefined
  try {
    return JSON.parse(t)
  } catch {
    return undefined
  }
}

/** The `message`, `error.message` or `error` string of a parsed JSON value. */
const innerMessage = (value: unknown): string | undefined => {
  if (!isRecord(value)) return undefined
  if (typeof value.message === "string") return value.message
  const error = value.error
  if (isRecord(error) && typeof error.message === "string") return error.message
  if (typeof error === "string") return error
  return undefined
}

/** A string field read as §7.1 says: its inner JSON message when it has one, else itself (capped). */
const innerOrSelf = (field: string, cap: number): string => {
  const inner = innerMessage(parseJson(field))
  return inner ?? (field.length > cap ? field.slice(0, cap) : field)
}

/**
 * The text classification reads (SPEC §7.1, TRACE.md §6). The input is a recorded error text:
 * either an error object's JSON (`{"name", "data": {"message", "responseBody", ...}}`), a JSON
 * message (`{"message": "limit reached"}`), or plain text. Headers and metadata never join it.
 */
export const classificationText = (text: string): string => {
  const parsed = parseJson(text)
  if (!isRecord(parsed)) return text
  const hasErrorShape = typeof parsed.name === "string" || isRecord(parsed.data)
  if (!hasErrorShape) return innerMessage(parsed) ?? text
  const parts: Array<string> = []
  if (typeof parsed.name === "string") parts.push(parsed.name)
  const data = parsed.data
  if (isRecord(data)) {
    if (typeof data.message === "string") parts.push(innerOrSelf(data.message, Number.POSITIVE_INFINITY))
    if (typeof data.responseBody === "string") parts.push(innerOrSelf(data.responseBody, BODY_TEXT_MAX))
  }
  if (parts.length === 0) {
    const inner = innerMessage(parsed)
    if (inner !== undefined) parts.push(inner)
  }
  return parts.join("\n")
}
