/** DbHost with fixed answers, for tests: a full disk, another process holding the file, or no way to tell. */
import { Effect, Layer } from "effect"
import { dbBytes } from "./DbHostProc.js"
import { DbHost } from "../../services/retention/DbHost.js"
import { traced } from "../hotPath.js"

export interface DbHostFacts {
  readonly freeBytes?: number | undefined
  readonly openBy?: ReadonlyArray<number> | undefined
}

/** Sizes are read from the real file (the sweeps under test run on one); free space and holders are given. */
export const DbHostMemory = (facts: DbHostFacts) =>
  Layer.succeed(
    DbHost,
    DbHost.of({
      bytes: traced("DbHost.bytes")((db: string) => Effect.sync(() => dbBytes(db))),
      freeBytes: traced("DbHost.freeBytes")((_db: string) => Effect.succeed(facts.freeBytes)),
      openBy: traced("DbHost.openBy")((_db: string) => Effect.succeed(facts.openBy))
    })
  )
