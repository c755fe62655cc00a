/** How a sweep ended, and the exit code that follows (SPEC §11.1, §11.5). */
import type { VacuumReport } from "./vacuum.js"

/** How a sweep ended, as far as its exit code is concerned. */
export interface SweepEnd {
  readonly stoppedBy: "busy" | "error" | null
  readonly stopReason: string | null
  readonly vacuum: VacuumReport
}

/** 1 for a database failure midway; 75 for a busy stop or a refused vacuum (deletions kept); else 0. */
export const sweepExitCode = (end: SweepEnd): 0 | 1 | 75 => (end.stoppedBy === "error" ? 1 : end.stoppedBy === "busy" || end.vacuum.refused ? 75 : 0)
