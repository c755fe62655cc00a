/**
 * `ocpool quota` (issue 12, US-48; issue 35):
 * - `ocpool quota [--json] [--state-dir DIR]`: the per-model quota records every process shares (read
 *   from providers' rate-limit headers, or a provider's budget endpoint), the stale ones left out, and the
 *   budgets learned from 429s beside them, marked as learned. Exit 0; 1 if the state is unreadable.
 * - `ocpool quota forget GROUP|MODEL… | --all`: forgets learned budgets for every process (a model names
 *   its group). Exit 0; 1 when one named had nothing learned; 2 bad input.
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { groupOf } from "../core/limits/learned.js"
import { printable, printableJson } from "../core/printable.js"
import { quotaEntries, quotaLine } from "../core/status.js"
import { learnedEntries, learnedLine } from "../core/view/learned.js"
import { SharedState } from "../services/state/SharedState.js"
import { BadInput } from "./errors.js"
import { ExitWith } from "./notify.js"
import { diagnostic } from "./output.js"
import { jsonFlag } from "./shared/flags.js"
import { changeState } from "./shared/stateWriter.js"
import { openState, readShared } from "./stateView.js"
import { stateDirOption } from "./status.js"

export const NO_QUOTA = "no quota seen yet (quota is read from providers' rate-limit headers, and learned from their 429s)"

/** How long `forget` waits for the database (a person waits; a change must not fail open). */
const FORGET_WAIT_MS = 10_000

export interface QuotaFlags {
  readonly json: boolean
  readonly stateDir: string | undefined
}

export const quotaRun = (args: QuotaFlags) =>
  Effect.gen(function* () {
    const state = yield* openState(args.stateDir)
    const { now, snapshot } = yield* readShared(state, { quota: true, learned: true })
    const entries = quotaEntries(snapshot.quota, now)
    const learned = learnedEntries(snapshot.learned, now)
    for (const w of state.warnings) yield* diagnostic(printable(w))
    if (args.json) return yield* Console.log(printableJson(JSON.stringify({ models: entries, learned })))
    const lines = [...entries.map((e) => printable(quotaLine(e, now))), ...learned.map((e) => learnedLine(e, now))]
    yield* Console.log(lines.length === 0 ? NO_QUOTA : lines.join("\n"))
  })

export const quotaForgetRun = (flags: { readonly names: ReadonlyArray<string>; readonly all: boolean; readonly json: boolean; readonly stateDir: Option.Option<string> }) =>
  Effect.gen(function* () {
    if (flags.names.length === 0 && !flags.all) return yield* new BadInput({ message: "name the groups or models to forget, or --all" })
    if (flags.names.length > 0 && flags.all) return yield* new BadInput({ message: "give groups or models, or --all, not both" })
    const bad = flags.names.find((n) => n.trim() === "" || !n.includes("/"))
    if (bad !== undefined) return yield* new BadInput({ message: `${JSON.stringify(printable(bad))}: a group (openrouter/*:free) or a model, provider/model`, option: "GROUP", value: bad })
    const wanted = [...new Set(flags.names.map((n) => (n.includes("*") ? n : groupOf(n))))]
    const { forgotten, unknown } = yield* changeState(Option.getOrUndefined(flags.stateDir), FORGET_WAIT_MS, (now) =>
      Effect.flatMap(SharedState, (s) =>
        s.transact(now, { learned: true }, (snap) => {
          const known = snap.learned.filter((b) => b.limits.length > 0).map((b) => b.group)
          const forgotten = flags.all ? known : wanted.filter((g) => known.includes(g))
          const unknown = flags.all ? [] : wanted.filter((g) => !known.includes(g))
          // the counts go with the budgets: a group starts learning again from its next 429
          return { value: { forgotten, unknown }, commit: { cool: [], uncool: [], forget: flags.all ? snap.learned.map((b) => b.group) : forgotten } }
        })
      )
    )
    if (flags.json) yield* Console.log(printableJson(JSON.stringify({ forgotten, unknown })))
    else
      yield* Console.log(
        [...forgotten.map((g) => `forgot the learned budget of ${printable(g)}`), ...unknown.map((g) => `${printable(g)} had nothing learned`), ...(forgotten.length === 0 && unknown.length === 0 ? ["nothing was learned"] : [])].join("\n")
      )
    if (unknown.length > 0) return yield* new ExitWith({ code: 1 })
  })

export const quotaForgetCommand = Command.make(
  "forget",
  {
    names: Args.text({ name: "GROUP" }).pipe(Args.withDescription("A group as `ocpool quota` shows it (openrouter/*:free), or a model of it (provider/model)"), Args.repeated),
    all: Options.boolean("all").pipe(Options.withDescription("Every learned budget")),
    json: jsonFlag,
    stateDir: stateDirOption
  },
  (a) => quotaForgetRun(a)
).pipe(
  Command.withDescription(
    "Forget budgets learned from 429s, for every process: the groups named (a model names its group), or --all; their counts go too, and the next 429 teaches them again. A cooldown a learned budget started stays until it ends or `ocpool cool clear`. Exit 0; 1 if a group named had nothing learned; 2 bad input."
  )
)

export const quotaCommand = Command.make(
  "quota",
  {
    json: Options.boolean("json").pipe(
      Options.withDescription(
        'One JSON object on stdout: {"models":[{"model","requests","tokens","seenAt"}],"learned":[{"group","window","limit","remaining","resetAt","samples","used":{"minute","day"},"limits"}]}, requests and tokens each {"remaining","limit","resetAt"} or null'
      )
    ),
    stateDir: stateDirOption
  },
  (args) => quotaRun({ json: args.json, stateDir: Option.getOrUndefined(args.stateDir) })
).pipe(
  Command.withDescription(
    "List each model's quota as last read from its provider's rate-limit headers or budget endpoint (remaining/limit, reset, when seen), and the budgets learned from 429s (marked learned, with how many 429s agreed), shared by every opencode process; records whose reset has passed, or without a reset seen over 10 minutes ago, are left out. Exit 0; 1 if the state directory is unreadable."
  ),
  Command.withSubcommands([quotaForgetCommand])
)
