/** Whether `--vacuum` may run (SPEC §11.5). */

export interface VacuumFacts {
  readonly requested: boolean
  readonly dryRun: boolean
  readonly force: boolean
  readonly dbBytes: number
  /** Free bytes on the database's filesystem; undefined when it cannot be read. */
  readonly freeBytes: number | undefined
  /** Other processes holding the database or its `-wal` open; undefined when that cannot be checked. */
  readonly openBy: ReadonlyArray<number> | undefined
}

export type VacuumVerdict =
  | { readonly _tag: "NotRequested" }
  | { readonly _tag: "WouldRun" }
  | { readonly _tag: "Run" }
  | { readonly _tag: "Refused"; readonly reason: string }

export const vacuumVerdict = (f: VacuumFacts): VacuumVerdict => {
  if (!f.requested) return { _tag: "NotRequested" }
  if (f.dryRun) return { _tag: "WouldRun" }
  if (f.force) return { _tag: "Run" }
  if (f.openBy === undefined) return { _tag: "Refused", reason: "cannot tell whether another process has the database open (use --force to vacuum anyway)" }
  if (f.openBy.length > 0)
    return { _tag: "Refused", reason: `the database is open in another process (pid ${f.openBy.join(", ")}); close opencode or use --force` }
  if (f.freeBytes === undefined) return { _tag: "Refused", reason: "cannot read the free disk space (use --force to vacuum anyway)" }
  if (f.freeBytes < f.dbBytes) return { _tag: "Refused", reason: `free disk space (${f.freeBytes} bytes) is smaller than the database (${f.dbBytes} bytes)` }
  return { _tag: "Run" }
}
