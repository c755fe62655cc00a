/**
 * `ocpool doctor [--probe] [--json] [--state-dir DIR]` (SPEC §12.2): checks the setup, one line per
 * check, in one order; each feature's checks live beside this file (plugin.ts, state.ts, permits.ts,
 * notify.ts, runtime.ts).
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { printable, printableJson } from "../../core/printable.js"
import { MachineFactsProc } from "../../layers/permits/MachineFactsProc.js"
import type { MachineFacts } from "../../services/permits/MachineFacts.js"
import { ChecksFailed } from "../errors.js"
import { stateDirOption } from "../status.js"
import { guarded, type Check } from "./check.js"
import { liveFacts, notifyChecks, PROBE_TITLE, probeChecks, type NotifyFacts } from "./notify.js"
import { machineCheck } from "./permits.js"
import { pluginCheck, poolCheck, slotModelsCheck } from "./plugin.js"
import { opencodeDbCheck, runtimeCheck } from "./runtime.js"
import { stateChecks, stateDirCheck } from "./state.js"

export type { Check, CheckStatus } from "./check.js"
export { fadeCheck, hopCommandDetail, notifierDetail, PROBE_TITLE, sshHopCheck, type NotifyFacts } from "./notify.js"
export { backendCheck, databaseCheck, leftoversCheck } from "./state.js"
export { opencodeConfigs, pluginCheck, poolFileProblem } from "./plugin.js"

/** Every check in the report's order; the machine's facts (the budgets' capacity `auto`, the `machine` check) from the `MachineFacts` in context. */
export const runChecks = (stateFlag: string | undefined, probe = false, facts: NotifyFacts = liveFacts()): Effect.Effect<ReadonlyArray<Check>, never, MachineFacts> =>
  Effect.gen(function* () {
    const groups: Array<ReadonlyArray<Check>> = []
    groups.push(yield* guarded("pool", poolCheck))
    groups.push(yield* guarded("models", slotModelsCheck))
    groups.push(yield* guarded("state-dir", () => stateDirCheck(stateFlag)))
    groups.push(yield* stateChecks(stateFlag))
    groups.push(yield* guarded("opencode-db", opencodeDbCheck))
    groups.push(yield* notifyChecks(facts))
    groups.push(yield* guarded("plugin", () => pluginCheck()))
    groups.push(yield* machineCheck)
    groups.push(yield* guarded("runtime", runtimeCheck))
    if (probe) groups.push(yield* probeChecks(facts))
    return groups.flat()
  })

export const doctorCommand = Command.make(
  "doctor",
  {
    probe: Options.boolean("probe").pipe(
      Options.withDescription(
        `Also send a test notification ('${PROBE_TITLE}') through the channel the plugin would use (the ssh hop in an SSH session) and report it as the check 'probe': fail when not delivered. When a hop host is configured, also send it an inert probe (one token word; ocpool receive shows nothing for it) and report as 'hop-command' whether the host answers with the forced command ocpool receive: warn when a login shell answers (the host must use the forced-command key written by ocpool tunnel setup)`
      )
    ),
    json: Options.boolean("json").pipe(Options.withDescription('{"checks":[{id,status,detail}],"ok":bool} on stdout')),
    stateDir: stateDirOption
  },
  (args) =>
    Effect.gen(function* () {
      const checks = yield* runChecks(Option.getOrUndefined(args.stateDir), args.probe).pipe(Effect.provide(MachineFactsProc()))
      const ok = checks.every((c) => c.status !== "fail")
      // details carry text from files (models, paths): no escape sequence reaches the terminal
      if (args.json) yield* Console.log(printableJson(JSON.stringify({ checks, ok })))
      else for (const c of checks) yield* Console.log(`${c.status.padEnd(4)} ${c.id.padEnd(12)} ${printable(c.detail)}`)
      if (!ok) return yield* new ChecksFailed({ failed: checks.filter((c) => c.status === "fail").map((c) => c.id) })
    })
).pipe(Command.withDescription(
    "Check the pool source, the slot models (known to opencode's model catalog or config, their providers' credentials), state directory, shared-state backend (state.db, or with OCPOOL_STATE_URL the PostgreSQL server: URL masked, round trip, schema version), claims, whether a running opencode has the plugin loaded, cooldowns, the state database (size, WAL, schema version, quick_check), heavy-work permits, an earlier version's leftover files, opencode database, notifier (the channel the plugin would use), ssh hop (its host and where it comes from), fade (gdbus), plugin listing, the machine (effective CPUs and memory with their cgroup limits, pressure) and runtime; with --probe, also send a test notification, and probe the hop host for its forced command (hop-command). Exit 0; 1 if a check fails."
  ))
