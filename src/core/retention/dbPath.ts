/** Which database the sweeps open (SPEC §11.1): `--db`, then `OPENCODE_DB`, then `$XDG_DATA_HOME/opencode/opencode.db`. */
import { isAbsolute, join, resolve } from "node:path"

export interface DbPathInput {
  readonly flag?: string | undefined
  readonly env?: string | undefined
  /** `$XDG_DATA_HOME` (or its default), absolute. */
  readonly dataHome: string
  /** The working directory a relative `--db` is resolved against, absolute. */
  readonly cwd: string
}

export type DbPath = { readonly _tag: "Path"; readonly path: string; readonly from: "--db" | "OPENCODE_DB" | "default" } | { readonly _tag: "Problem"; readonly reason: string }

export const resolveDbPath = (input: DbPathInput): DbPath => {
  if (input.flag !== undefined) {
    if (input.flag === "" || input.flag === ":memory:") return { _tag: "Problem", reason: `--db must name a database file, got '${input.flag}'` }
    return { _tag: "Path", path: resolve(input.cwd, input.flag), from: "--db" }
  }
  if (input.env !== undefined && input.env !== "") {
    if (input.env === ":memory:") return { _tag: "Problem", reason: "OPENCODE_DB=:memory: names no file on disk; set it to a database path or pass --db" }
    return { _tag: "Path", path: isAbsolute(input.env) ? input.env : join(input.dataHome, "opencode", input.env), from: "OPENCODE_DB" }
  }
  return { _tag: "Path", path: join(input.dataHome, "opencode", "opencode.db"), from: "default" }
}
