/**
 * The fleet driver's command line (issue 22 item 5, moved out of `ocpool` by issue 34): a development
 * entry, `node dist/dev-fleet-drive.js --config FILE --picks N --hold H --seed S --pause-ms P
 * --start-at EPOCH_MS [--cool-after K --cool-model MODEL --cool-ms W]`, built by scripts/build.mjs and
 * never shipped (package.json `files` does not list it). It routes base `explore` N times through the
 * plugin's own hooks (fleetDriveRun.ts), printing one JSON line per event, for tests, benchmarks and the
 * demo. The flags, the output lines and the exit codes are those `ocpool fleet drive` had: its argv is
 * read by `core/state/drive.ts` (`parseDriveArgs`, then `checkDriveFlags`); a usage problem is one
 * `ocpool:` line, the usage and where the help is, exit 2; a bad value or config file one line, exit 2
 * (the CLI's `outcome.ts` maps them, as it did).
 */
import { Effect } from "effect"
import { checkDriveFlags, DRIVE_FLAGS, parseDriveArgs } from "../core/state/drive.js"
import { BadInput } from "../cli/errors.js"
import { helpWidth, wrapHelp } from "../cli/help/wrap.js"
import { exitCodeOfFailures, finishRun } from "../cli/outcome.js"
import { type CliIo, CurrentIo, diagnostic, writeOut } from "../cli/output.js"
import { driveRun } from "./fleetDriveRun.js"

/** How the driver is run (from the checkout's root, after `node scripts/build.mjs`). */
export const DRIVE_INVOCATION = "node dist/dev-fleet-drive.js"

const FLAG_TEXT: Readonly<Record<string, string>> = {
  "--config": "Required. The plugin's options as a JSON object (state, stateDir, lockWaitMs, models, …); OCPOOL_STATE_URL and OCPOOL_HOST_ID apply",
  "--picks": "Required. How many spawns of base explore to route (a positive integer)",
  "--hold": "Required. Claims held at most: before a pick that would make H+1, the oldest is released as a cancelled task",
  "--seed": "Required. Seed of the pauses (an integer 0 or more)",
  "--pause-ms": "Required. After each pick, a pause drawn from 0..P ms (seeded)",
  "--start-at": "Required. Wall-clock time (epoch ms) of the first pick: the driver boots, prints its start line and waits until then",
  "--cool-after": "Optional, with --cool-model and --cool-ms: right after the K-th pick, cool --cool-model for --cool-ms as the plugin does on a 429 (rate_limit, model scope)",
  "--cool-model": "The model the 429 comes from (provider/model, one of the pool's slots)",
  "--cool-ms": "The 429's retry-after, in ms: the cooldown's window (as in the plugin, under 1 s cools for 1 s; over 7 days counts as no stated window)"
}

const DESCRIPTION =
  "A driver for tests, benchmarks and the demo: boot the plugin's hooks in this process over the backend FILE chooses, wait until --start-at, then route base explore N times through the plugin's own route path (the shared-state port, the pure pick), holding at most H claims (the oldest released as a cancelled task, which never clears a cooldown) and pausing a seeded 0..P ms after each pick; with --cool-after, feed a 429 of MODEL with retry-after W; at the end release everything. Stdout: one JSON object per line: {\"ev\":\"start\",\"host\",\"pid\",\"backend\"}, {\"ev\":\"pick\",\"host\",\"key\",\"model\",\"slot\",\"pass\",\"load\",\"cap\",\"cooling\",\"at\"} (load: the model's fleet-wide live claims with this one; cap: 2 × weight; cooling: the models cooling in the snapshot the pick used; at: epoch ms after the commit), {\"ev\":\"release\",\"host\",\"key\",\"at\"}, {\"ev\":\"cool\",\"host\",\"model\",\"until\",\"at\"}, {\"ev\":\"done\",\"host\",\"picks\",\"failOpens\",\"fallbacks\"}; logs on stderr. Exit 0; 2 with a bad flag or an unreadable or invalid config file."

/** The usage line, hanging after the invocation (a TAB marks the column: cli/help/wrap.ts). */
const USAGE = `usage: ${DRIVE_INVOCATION} \t${DRIVE_FLAGS.map((f) => `[${f.name} ${f.pseudo}]`).join(" ")}`

/** The help page, unwrapped (laid out as the CLI's pages: cli/help/render.ts). */
const helpPage = (): string => {
  const rows = [...DRIVE_FLAGS.map((f) => [`${f.name} ${f.pseudo}`, FLAG_TEXT[f.name] ?? ""] as const), ["-h, --help", "this help"] as const]
  const width = Math.max(...rows.map(([l]) => l.length))
  return [USAGE, "", DESCRIPTION, "", "flags:", ...rows.map(([label, text]) => `  ${label.padEnd(width)}  \t${text}`)].join("\n") + "\n"
}

/** Help text wrapped to the io's stream (its terminal's width, else $COLUMNS, else 80). */
const printWrapped = (io: CliIo, which: "stdout" | "stderr", text: string): Effect.Effect<void> =>
  writeOut(io, which, wrapHelp(text, helpWidth(io[which].columns, io.env)))

/** The driver's run over its argv (after the script): its help, a usage problem, or the drive. */
const program = (args: ReadonlyArray<string>): Effect.Effect<number, BadInput> =>
  Effect.flatMap(CurrentIo, (io) => {
    const read = parseDriveArgs(args)
    switch (read._tag) {
      case "Help":
        return Effect.as(printWrapped(io, "stdout", helpPage()), 0)
      case "Usage":
        return Effect.as(
          Effect.zipRight(diagnostic(read.message), printWrapped(io, "stderr", `${USAGE}\n'${DRIVE_INVOCATION} --help' shows its flags.\n`)),
          2
        )
      case "Raw": {
        const checked = checkDriveFlags(read.raw)
        if (checked._tag === "Problem") return new BadInput({ message: checked.message })
        return Effect.as(driveRun(checked.value, io.env), 0)
      }
    }
  })

/**
 * Runs the driver with `args` (the words after the script) on `io`; resolves to the exit code: 0, or 2
 * with a bad flag or config file (one line, as `ocpool` says it: cli/outcome.ts).
 */
export const runDrive = (args: ReadonlyArray<string>, io: CliIo): Effect.Effect<number> => finishRun(exitCodeOfFailures(program(args)), io)
