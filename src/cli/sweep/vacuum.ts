/** The `--vacuum` step shared by both sweeps (SPEC §11.5): decide in the core, run through the store. */
import { Effect } from "effect"
import { vacuumVerdict } from "../../core/retention/vacuum.js"
import { DbHost } from "../../services/retention/DbHost.js"
import { RetentionStore } from "../../services/retention/RetentionStore.js"
import { withBusyRetry } from "../shared/db.js"

export interface VacuumReport {
  readonly requested: boolean
  readonly ran: boolean
  readonly refused: boolean
  readonly reason: string | null
  readonly bytesBefore: number | null
  readonly bytesAfter: number | null
}

export const NO_VACUUM: VacuumReport = { requested: false, ran: false, refused: false, reason: null, bytesBefore: null, bytesAfter: null }

export const vacuumStep = (db: string, flags: { readonly requested: boolean; readonly dryRun: boolean; readonly force: boolean }) =>
  Effect.gen(function* () {
    if (!flags.requested) return NO_VACUUM
    const host = yield* DbHost
    const store = yield* RetentionStore
    const bytesBefore = yield* host.bytes(db)
    const needsFacts = !flags.dryRun && !flags.force
    const verdict = vacuumVerdict({
      ...flags,
      dbBytes: bytesBefore,
      freeBytes: needsFacts ? yield* host.freeBytes(db) : undefined,
      openBy: needsFacts ? yield* host.openBy(db) : undefined
    })
    switch (verdict._tag) {
      case "NotRequested":
        return NO_VACUUM
      case "WouldRun":
        return { requested: true, ran: false, refused: false, reason: "dry run: the vacuum would have run", bytesBefore, bytesAfter: null }
      case "Refused":
        return { requested: true, ran: false, refused: true, reason: verdict.reason, bytesBefore, bytesAfter: null }
      case "Run": {
        const ran = yield* withBusyRetry(store.vacuum).pipe(Effect.either)
        if (ran._tag === "Left") return { requested: true, ran: false, refused: true, reason: `vacuum failed: ${ran.left.reason}`, bytesBefore, bytesAfter: null }
        return { requested: true, ran: true, refused: false, reason: null, bytesBefore, bytesAfter: yield* host.bytes(db) }
      }
    }
  })

