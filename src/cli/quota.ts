/**
 * `ocpool quota [--json] [--state-dir DIR]` (issue 12, US-48): the per-model quota records every process
 * shares through the state directory (`quota.<enc>.json`, read from providers' rate-limit headers), the
 * stale ones left out. Exit 0; 1 if the state directory is unreadable.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { printable, printableJson } from "../core/printable.js"
import { quotaEntries, quotaLine } from "../core/status.js"
import { diagnostic } from "./output.js"
import { openState, readShared } from "./stateView.js"
import { stateDirOption } from "./status.js"

export const NO_QUOTA = "no quota seen yet (quota is read from providers' rate-limit headers)"

export interface QuotaFlags {
  readonly json: boolean
  readonly stateDir: string | undefined
}

export const quotaRun = (args: QuotaFlags) =>
  Effect.gen(function* () {
    const state = yield* openState(args.stateDir)
    const { now, snapshot } = yield* readShared(state, { quota: true })
    const entries = quotaEntries(snapshot.quota, now)
    for (const w of state.warnings) yield* diagnostic(printable(w))
    if (args.json) return yield* Console.log(printableJson(JSON.stringify({ models: entries })))
    yield* Console.log(entries.length === 0 ? NO_QUOTA : entries.map((e) => printable(quotaLine(e, now))).join("\n"))
  })

export const quotaCommand = Command.make(
  "quota",
  {
    json: Options.boolean("json").pipe(
      Options.withDescription('One JSON object on stdout: {"models":[{"model","requests","tokens","seenAt"}]}, requests and tokens each {"remaining","limit","resetAt"} or null')
    ),
    stateDir: stateDirOption
  },
  (args) => quotaRun({ json: args.json, stateDir: Option.getOrUndefined(args.stateDir) })
).pipe(
  Command.withDescription(
    "List each model's quota as last read from its provider's rate-limit headers (remaining/limit, reset, when seen), shared by every opencode process through the state directory; records whose reset has passed, or without a reset seen over 10 minutes ago, are left out. Exit 0; 1 if the state directory is unreadable."
  )
)
