/**
 * The context map (issue 23): the files an edit, write or patch tool wrote queue a refresh of the map
 * (the bus's idle starts it, in the engine). Without option `contextMap` there is no part.
 */
import { editedPaths, underDirectory } from "../../core/context/edits.js"
import { field } from "../../core/extract.js"
import type { PoolEngineService } from "../../services/pool/PoolEngine.js"
import type { Parts, Runner } from "./runner.js"

export const contextHooks = (r: Runner, engine: PoolEngineService, enabled: boolean, dir: string | undefined): Parts =>
  enabled
    ? {
        "tool.execute.after": async (input) => {
          const paths = editedPaths(field(input, "tool"), field(input, "args")).map((p) => (dir === undefined ? p : underDirectory(dir, p)))
          const session = field(input, "sessionID")
          if (paths.length > 0 && typeof session === "string") await r.run(engine.apply({ type: "contextEdit", session, paths }), "context map")
        }
      }
    : {}
