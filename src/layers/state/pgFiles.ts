/**
 * The files a fleet URL names (`?sslrootcert=`, `?sslcert=`, `?sslkey=`), checked before the
 * PostgreSQL client reads them (issue 33): the client reads them while it parses the URL and throws
 * past every error path, which showed as an "internal error". A file that cannot be read turns fleet
 * mode off with one warning naming it, as any other unusable URL does.
 */
import { closeSync } from "node:fs"
import { maskUrl, type StateBackend } from "../../core/state/fleet.js"
import { printable } from "../../core/printable.js"
import { openRegular } from "../fs/safeRead.js"

const FILE_KEYS = ["sslrootcert", "sslcert", "sslkey"]

/** Why a file the URL names cannot be read (`sslrootcert /x cannot be read (no such file)`); `undefined` when all can. */
export const pgFileProblem = (url: string): string | undefined => {
  const q = url.indexOf("?")
  if (q < 0) return undefined
  let params: URLSearchParams
  try {
    params = new URLSearchParams(url.slice(q + 1).split("#")[0])
  } catch {
    return undefined
  }
  for (const key of FILE_KEYS) {
    const path = params.get(key)
    // `sslrootcert=system`: the system's CA store, no file of ours
    if (path === null || path === "" || (key === "sslrootcert" && path === "system")) continue
    // opened as every input file is (layers/fs/safeRead.ts): a regular file, readable, named by its reason otherwise
    const opened = openRegular(path)
    if (opened._tag === "Open") closeSync(opened.fd)
    else return `${key} ${printable(path)} cannot be read (${opened._tag === "Missing" ? "no such file" : opened.reason})`
  }
  return undefined
}

/** `chosen` when its files can be read; else the state directory's database, with one warning. */
export const withReadableFiles = (chosen: { readonly state: StateBackend; readonly warnings: ReadonlyArray<string> }): { readonly state: StateBackend; readonly warnings: ReadonlyArray<string> } => {
  if (chosen.state.backend !== "postgres") return chosen
  const problem = pgFileProblem(chosen.state.url)
  if (problem === undefined) return chosen
  const name = chosen.state.from === "env" ? "OCPOOL_STATE_URL" : "option state.url"
  return { state: { backend: "sqlite" }, warnings: [...chosen.warnings, `${name} ${maskUrl(chosen.state.url)}: ${problem}; using the state directory`] }
}
