/** `ocpool doctor`'s checks (SPEC §12.2): one line each, and how a check that throws still gives its line. */
import { Cause, Effect } from "effect"

export type CheckStatus = "ok" | "warn" | "fail"
export interface Check {
  readonly id: string
  readonly status: CheckStatus
  readonly detail: string
}

/** `ocpool <args>` as a hint writes it when how ocpool runs from here is not asked (layers/install/installation.ts `ocpoolLine`). */
export const bareOcpool = (args: string): string => `ocpool ${args}`

/** One line of whatever was thrown, bounded: a check that throws reports this as its failure. */
export const oneLine = (e: unknown): string => {
  try {
    const text = e instanceof Error ? `${e.name}: ${e.message}` : typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)
    const line = text.split("\n")[0] ?? ""
    return line.length > 200 ? `${line.slice(0, 200)}…` : line
  } catch {
    return "unknown error"
  }
}

/** The check `id` failed in itself: its line says how. */
export const failedItself = (id: string) => (cause: Cause.Cause<unknown>) => Effect.succeed([{ id, status: "fail" as const, detail: `the check itself failed: ${oneLine(Cause.squash(cause))}` }])

/** Runs one check; anything it throws becomes that check's failure, so the report is always printed whole. */
export const guarded = (id: string, run: () => Check | ReadonlyArray<Check>): Effect.Effect<ReadonlyArray<Check>> =>
  Effect.try({
    try: () => {
      const out = run()
      return Array.isArray(out) ? (out as ReadonlyArray<Check>) : [out as Check]
    },
    catch: (e) => e
  }).pipe(Effect.catchAllCause(failedItself(id)))

