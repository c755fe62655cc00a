/**
 * `ocpool cool` (issue 32): the cooldowns every process shares, by hand.
 * - `ocpool cool [--json] [--state-dir DIR]`: what cools now (model, reason, strike, until, source, note).
 * - `ocpool cool clear MODEL… | --provider P | --all [--reset-strikes]`: ends those cooldowns for every
 *   process (each running opencode honours it at its next pick), strikes kept unless `--reset-strikes`,
 *   saying what it ended. Exit 0; 1 when a model named was not cooling; 2 bad input.
 * - `ocpool cool set MODEL --for DUR [--reason TEXT]`: benches a model by hand until then. Exit 0; 2 bad input.
 * Each change is one transaction of the shared-state port (state.db, or a fleet's PostgreSQL).
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { benchCooldown, checkModel, coolingNow, planClear, type ClearSelector } from "../core/cool/manual.js"
import type { Cooldown } from "../core/pool/cooldown.js"
import { parseDuration } from "../core/duration.js"
import { printable, printableJson } from "../core/printable.js"
import { clockTimeFrom, formatDuration } from "../core/time.js"
import { SharedState } from "../services/state/SharedState.js"
import { BadInput } from "./errors.js"
import { ExitWith } from "./notify.js"
import { changeState } from "./shared/stateWriter.js"
import { openState, readShared } from "./stateView.js"
import { stateDirOption } from "./status.js"

/** How long a change waits for the database (a person waits; a change must not fail open). */
export const COOL_WAIT_MS = 10_000

const jsonFlag = Options.boolean("json").pipe(Options.withDescription("One JSON object on stdout"))

const coolJson = (c: Cooldown) => ({ model: c.model, reason: c.reason, strikes: c.strikes, since: c.since, until: c.until, source: c.source, note: c.note ?? null })

/** One line of a cooling model. */
export const coolLine = (c: Cooldown, now: number): string =>
  `${printable(c.model)}  ${c.reason}  strike ${c.strikes}  until ${clockTimeFrom(c.until, now)} (in ${formatDuration(c.until - now)})  source ${c.source}${c.note === undefined ? "" : `  "${printable(c.note)}"`}`

export const coolListRun = (flags: { readonly json: boolean; readonly stateDir: Option.Option<string> }) =>
  Effect.gen(function* () {
    const state = yield* openState(Option.getOrUndefined(flags.stateDir))
    const { now, snapshot } = yield* readShared(state, { cooldowns: true })
    const cooling = coolingNow(snapshot.cooldowns, now)
    if (flags.json) return yield* Console.log(printableJson(JSON.stringify({ cooling: cooling.map(coolJson) })))
    yield* Console.log(cooling.length === 0 ? "no model cooling" : cooling.map((c) => coolLine(c, now)).join("\n"))
  })

/** Runs `f` over the port a change writes through, at the wall clock's `now`. */
const changing = <A, E>(stateDir: Option.Option<string>, f: (now: number) => Effect.Effect<A, E, SharedState>) => changeState(Option.getOrUndefined(stateDir), COOL_WAIT_MS, f)

/** The selector the flags give, or the usage problem. */
export const selectorOf = (models: ReadonlyArray<string>, provider: string | undefined, all: boolean): ClearSelector | string => {
  const given = (models.length > 0 ? 1 : 0) + (provider !== undefined ? 1 : 0) + (all ? 1 : 0)
  if (given === 0) return "name the models to clear, or --provider P, or --all"
  if (given > 1) return "give models, --provider or --all, only one of them"
  if (all) return { _tag: "All" }
  if (provider !== undefined) return provider === "" || provider.includes("/") ? `--provider ${JSON.stringify(provider)}: a provider id without a slash (zen, openrouter)` : { _tag: "Provider", provider }
  for (const m of models) {
    const bad = checkModel(m)
    if (bad !== undefined) return `${JSON.stringify(printable(m))}: ${bad}`
  }
  return { _tag: "Models", models }
}

export const coolClearRun = (flags: { readonly models: ReadonlyArray<string>; readonly provider: Option.Option<string>; readonly all: boolean; readonly resetStrikes: boolean; readonly json: boolean; readonly stateDir: Option.Option<string> }) =>
  Effect.gen(function* () {
    const selector = selectorOf(flags.models, Option.getOrUndefined(flags.provider), flags.all)
    if (typeof selector === "string") return yield* new BadInput({ message: selector })
    const { plan, now } = yield* changing(flags.stateDir, (now) =>
      Effect.flatMap(SharedState, (s) =>
        s.transact(now, { cooldowns: true }, (snap) => {
          const plan = planClear(snap.cooldowns, selector, flags.resetStrikes, now)
          return { value: { plan, now }, commit: { cool: plan.markers, uncool: [] } }
        })
      )
    )
    if (flags.json) {
      yield* Console.log(printableJson(JSON.stringify({ cleared: plan.cleared.map(coolJson), notCooling: plan.notCooling, strikesReset: flags.resetStrikes })))
    } else {
      const lines = [
        ...plan.cleared.map((c) => `cleared ${printable(c.model)} (${c.reason}, strike ${c.strikes}${flags.resetStrikes && c.strikes > 0 ? " reset to 0" : ""}, was until ${clockTimeFrom(c.until, now)})`),
        ...plan.notCooling.map((m) => `${printable(m)} is not cooling`),
        ...(plan.cleared.length === 0 && plan.notCooling.length === 0 ? [selector._tag === "All" ? "no model was cooling" : `no model of ${printable((selector as { provider: string }).provider)} was cooling`] : [])
      ]
      yield* Console.log(lines.join("\n"))
    }
    if (plan.notCooling.length > 0) return yield* new ExitWith({ code: 1 })
  })

export const coolSetRun = (flags: { readonly model: string; readonly forText: string; readonly reason: Option.Option<string>; readonly json: boolean; readonly stateDir: Option.Option<string> }) =>
  Effect.gen(function* () {
    const bad = checkModel(flags.model)
    if (bad !== undefined) return yield* new BadInput({ message: `${JSON.stringify(printable(flags.model))}: ${bad}`, option: "MODEL", value: flags.model })
    const ms = parseDuration(flags.forText)
    if (typeof ms !== "number") return yield* new BadInput({ message: `--for ${printable(flags.forText)}: ${ms.error}`, option: "--for", value: flags.forText })
    if (ms < 1_000) return yield* new BadInput({ message: `--for ${printable(flags.forText)}: at least 1s`, option: "--for", value: flags.forText })
    const { record, now } = yield* changing(flags.stateDir, (now) =>
      Effect.flatMap(SharedState, (s) =>
        s.transact(now, { cooldowns: true }, (snap) => {
          const record = benchCooldown(snap.cooldowns, flags.model, ms, Option.getOrUndefined(flags.reason), now)
          return { value: { record, now }, commit: { cool: [record], uncool: [] } }
        })
      )
    )
    yield* Console.log(flags.json ? printableJson(JSON.stringify({ set: coolJson(record) })) : `${printable(record.model)} cools by hand until ${clockTimeFrom(record.until, now)} (${formatDuration(ms)})`)
  })

export const coolClearCommand = Command.make(
  "clear",
  {
    models: Args.text({ name: "MODEL" }).pipe(Args.withDescription("A cooling model, provider/model (as `ocpool cool` shows it)"), Args.repeated),
    provider: Options.text("provider").pipe(Options.withPseudoName("P"), Options.withDescription("Every cooling model of provider P"), Options.optional),
    all: Options.boolean("all").pipe(Options.withDescription("Every cooling model")),
    resetStrikes: Options.boolean("reset-strikes").pipe(Options.withDescription("Also forget their strikes (the next limit starts at strike 1)")),
    json: jsonFlag,
    stateDir: stateDirOption
  },
  (a) => coolClearRun(a)
).pipe(
  Command.withDescription(
    "End cooldowns for every process (a running opencode uses the model again at its next pick): the models named, every model of --provider P, or --all; their strikes kept unless --reset-strikes. Says what it ended. Exit 0; 1 if a model named was not cooling; 2 bad input."
  )
)

export const coolSetCommand = Command.make(
  "set",
  {
    model: Args.text({ name: "MODEL" }).pipe(Args.withDescription("The model to bench, provider/model")),
    forText: Options.text("for").pipe(Options.withPseudoName("DUR"), Options.withDescription("How long: 30s, 10m, 2h (at most 7 days)")),
    reason: Options.text("reason").pipe(Options.withPseudoName("TEXT"), Options.withDescription("Why, shown beside it (at most 200 characters)"), Options.optional),
    json: jsonFlag,
    stateDir: stateDirOption
  },
  (a) => coolSetRun(a)
).pipe(Command.withDescription("Bench a model by hand for every process: it cools (reason manual) for DUR. Exit 0; 2 bad input."))

export const coolCommand = Command.make("cool", { json: jsonFlag, stateDir: stateDirOption }, (a) => coolListRun(a)).pipe(
  Command.withDescription("List the models that cool now, shared by every opencode process: model, reason, strike, until, source (and a note set by hand). Exit 0; 1 if the state directory is unreadable."),
  Command.withSubcommands([coolClearCommand, coolSetCommand])
)
