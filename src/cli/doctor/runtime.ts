/**
 * `ocpool doctor`'s checks of what runs here: opencode's database (`opencode-db`: where the sweeps would
 * find it, how big it has grown) and the runtime (`runtime`: the Node version ocpool needs).
 */
import { existsSync, statSync } from "node:fs"
import { isAbsolute } from "node:path"
import { resolveDbPath } from "../../core/retention/dbPath.js"
import { noHomeReason, xdgDir } from "../../layers/fs/xdg.js"
import { ocpoolLine } from "../../layers/install/installation.js"
import type { Check } from "./check.js"

/** Where opencode's database is (the sweeps' resolution, SPEC §11.1) and how big it has grown. */
export const opencodeDbCheck = (): Check => {
  const dataHome = xdgDir("XDG_DATA_HOME")
  if (dataHome === undefined && !isAbsolute(process.env.OPENCODE_DB ?? "")) return { id: "opencode-db", status: "warn", detail: noHomeReason("XDG_DATA_HOME") }
  const resolved = resolveDbPath({ env: process.env.OPENCODE_DB, dataHome: dataHome ?? "/", cwd: process.cwd() })
  if (resolved._tag === "Problem") return { id: "opencode-db", status: "warn", detail: resolved.reason }
  const db = resolved.path
  if (!existsSync(db)) return { id: "opencode-db", status: "warn", detail: `${db} not found` }
  const size = (p: string) => (existsSync(p) ? statSync(p).size : 0)
  const bytes = size(db) + size(`${db}-wal`)
  const mb = (bytes / 1e6).toFixed(1)
  return bytes > 1e9
    ? { id: "opencode-db", status: "warn", detail: `${db} ${mb} MB: prune it with '${ocpoolLine("sweep events")}' (and '${ocpoolLine("sweep sessions")}')` }
    : { id: "opencode-db", status: "ok", detail: `${db} ${mb} MB` }
}

/** `runtime`: node 20.19 or later. */
export const runtimeCheck = (): Check => {
  const [major, minor] = process.versions.node.split(".").map(Number)
  return { id: "runtime", status: major! > 20 || (major === 20 && minor! >= 19) ? "ok" : "fail", detail: `node ${process.versions.node} (needs >= 20.19)` }
}
