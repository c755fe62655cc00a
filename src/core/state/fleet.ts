/**
 * Fleet mode (issue 22): which shared-state backend the settings choose, and what is safe to show of it.
 * The option `state: { backend: "postgres", url, schema?, leaseMs? }` or the environment's
 * `OCPOOL_STATE_URL` (a `postgres://` URL, which wins) select PostgreSQL; anything else, the state
 * directory's database `state.db` (SQLite; `backend: "file"`, the earlier name, means the same). A URL's password is never shown: `maskUrl` is what logs, `doctor` and `status`
 * print. The host id is `OCPOOL_HOST_ID`, else the hostname. Pure.
 */

import { isRecord } from "../json.js"

/** How long another host's holder counts as alive after its last heartbeat. */
export const FLEET_LEASE_MS = 30_000
/** How often a host renews its lease and re-publishes what it holds (a third of the lease). */
export const heartbeatEvery = (leaseMs: number): number => Math.max(1_000, Math.floor(leaseMs / 3))
/** After the server failed to answer, decisions go straight to the files this long before it is asked again (the heartbeat asks meanwhile). */
export const FLEET_RETRY_MS = 5_000
/** The fallback's warning is logged at most once a minute. */
export const FALLBACK_WARN_EVERY_MS = 60_000
export const DEFAULT_SCHEMA = "ocpool"
/** The schema version this build migrates to, in a fleet's schema and in state.db alike (src/layers/state/stateSql.ts's highest migration). */
export const SCHEMA_VERSION = 5

export type StateBackend =
  | { readonly backend: "sqlite" }
  | { readonly backend: "postgres"; readonly url: string; readonly schema: string; readonly leaseMs: number; readonly from: "option" | "env" }

export const LOCAL_BACKEND: StateBackend = { backend: "sqlite" }

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** A `postgres://` or `postgresql://` URL with a host; else why not. */
export const checkUrl = (url: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "not a URL"
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") return `not a postgres:// URL (${parsed.protocol.replace(/:$/, "")}://)`
  if (parsed.hostname === "" && !/[?&]host=/.test(parsed.search)) return "no host in the URL"
  return undefined
}

/** Query keys whose values are secrets (`password=`, `sslpassword=`, `token=`, …). */
const SECRET_KEY = /^[^=]*(pass|secret|token|key)[^=]*$/i

/**
 * Where the userinfo's password is in `url` as text, whatever its shape (issue 33: masked before any
 * parsing, which reads `postgres:user:pw@host` or `user:pw@host` as an opaque path and finds no
 * password): the text between the first `:` of the userinfo and the last `@`. After `postgres://` (or
 * `postgresql://`) the userinfo starts there; in any other shape everything from the first `:` is
 * hidden (`user:pw@host` whose password holds `//` or `:` looks like `scheme://…`).
 * `undefined` when there is no `@` or no `:` before it. Over-reaching is safe: the span is only hidden.
 */
const passwordSpan = (url: string): { readonly start: number; readonly end: number } | undefined => {
  const at = url.lastIndexOf("@")
  if (at < 0) return undefined
  // after `postgres://` the userinfo is plain; any other shape could be `user:pw@host` with a password
  // that holds `//` or `:`, so everything from the first `:` to the last `@` is hidden
  const scheme = /^postgres(?:ql)?:\/\//i.exec(url)
  const colon = url.indexOf(":", scheme === null ? 0 : scheme[0].length)
  if (colon < 0 || colon >= at) return undefined
  return { start: colon + 1, end: at }
}

/** The secrets a URL carries as text: its userinfo password and the values of secret query keys (as given). */
export const secretsOf = (url: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  const span = passwordSpan(url)
  if (span !== undefined && span.end > span.start) {
    const text = url.slice(span.start, span.end)
    out.push(text)
    // `scheme:user:password@…`: the span holds the user too; the password alone is scrubbed as well
    const inner = text.indexOf(":")
    if (inner >= 0 && inner < text.length - 1) out.push(text.slice(inner + 1))
  }
  for (const m of url.matchAll(/[?&]([^=&#]*)=([^&#]*)/g)) if (SECRET_KEY.test(m[1]!) && m[2] !== "") out.push(m[2]!)
  return out
}

/**
 * The URL with its password and secret query values replaced by `***`, done on the text before any
 * parsing, so that no shape of URL (no `//`, no scheme, a password holding `@` or `/`) shows one. Text
 * with neither `://` nor `@` is no URL at all, and could be a secret pasted alone: not shown.
 */
export const maskUrl = (url: string): string => {
  if (!url.includes("://") && !url.includes("@")) return "(not a URL)"
  const span = passwordSpan(url)
  const masked = span === undefined ? url : `${url.slice(0, span.start)}***${url.slice(span.end)}`
  return masked.replace(/([?&])([^=&#]*)=([^&#]*)/g, (all, sep: string, key: string, value: string) => (SECRET_KEY.test(key) && value !== "" ? `${sep}${key}=***` : all))
}

/** The backend of the option `state` and the environment, with one warning per problem (a bad choice falls back to files). */
export const parseStateBackend = (
  option: unknown,
  env: Readonly<Record<string, string | undefined>>
): { readonly state: StateBackend; readonly warnings: ReadonlyArray<string> } => {
  const warnings: Array<string> = []
  let schema = DEFAULT_SCHEMA
  let leaseMs = FLEET_LEASE_MS
  let url: string | undefined
  let wanted = false
  if (option !== undefined) {
    if (!isRecord(option)) warnings.push("option state must be an object ({ backend, url, schema }); using the state directory")
    else {
      const backend = option.backend
      if (backend !== undefined && backend !== "sqlite" && backend !== "file" && backend !== "postgres")
        warnings.push(`option state.backend ${JSON.stringify(backend)} invalid (sqlite or postgres); using the state directory`)
      wanted = backend === "postgres"
      if (option.url !== undefined) {
        if (typeof option.url === "string") url = option.url
        else warnings.push("option state.url must be a string; ignored")
      }
      if (option.schema !== undefined) {
        if (typeof option.schema === "string" && SCHEMA_NAME.test(option.schema)) schema = option.schema
        else warnings.push(`option state.schema ${JSON.stringify(option.schema)} invalid (lower-case letters, digits and _, at most 63); using ${DEFAULT_SCHEMA}`)
      }
      if (option.leaseMs !== undefined) {
        const v = option.leaseMs
        if (typeof v === "number" && Number.isInteger(v) && v >= 3_000 && v <= 3_600_000) leaseMs = v
        else warnings.push(`option state.leaseMs ${JSON.stringify(v)} invalid (an integer 3000-3600000), using ${FLEET_LEASE_MS}`)
      }
    }
  }
  const envUrl = env.OCPOOL_STATE_URL
  const from: "option" | "env" = envUrl !== undefined && envUrl !== "" ? "env" : "option"
  if (from === "env") {
    url = envUrl
    wanted = true
  }
  if (!wanted) return { state: LOCAL_BACKEND, warnings }
  if (url === undefined) {
    warnings.push("option state.backend is postgres but no url is given (state.url or OCPOOL_STATE_URL); using the state directory")
    return { state: LOCAL_BACKEND, warnings }
  }
  const bad = checkUrl(url)
  if (bad !== undefined) {
    warnings.push(`${from === "env" ? "OCPOOL_STATE_URL" : "option state.url"} ${maskUrl(url)} invalid (${bad}); using the state directory`)
    return { state: LOCAL_BACKEND, warnings }
  }
  return { state: { backend: "postgres", url, schema, leaseMs, from }, warnings }
}

/** This host's id in the fleet: `OCPOOL_HOST_ID` when set (trimmed, at most 128 characters), else the hostname. */
export const hostIdOf = (env: Readonly<Record<string, string | undefined>>, hostname: string): string => {
  const id = env.OCPOOL_HOST_ID?.trim()
  return id !== undefined && id !== "" ? id.slice(0, 128) : hostname
}

/** What a status view says of the backend. */
export const backendLabel = (state: StateBackend): string => (state.backend === "sqlite" ? "sqlite (state.db in the state directory)" : `postgres ${maskUrl(state.url)} schema ${state.schema}`)
