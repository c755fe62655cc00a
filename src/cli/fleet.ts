/**
 * `ocpool fleet` (issue 22): fleet mode's set-up and its driver.
 * - `fleet init --url URL [--schema NAME]`: check the connection, create and migrate the schema, print the option.
 * - `fleet drive --config FILE --picks N --hold H --seed S --pause-ms P --start-at EPOCH_MS
 *   [--cool-after K --cool-model MODEL --cool-ms W]`: route base `explore` N times through the plugin's
 *   own hooks, printing one JSON line per event (tests, benchmarks, the demo).
 * Every flag is text checked here, so a bad value is one line naming the flag and exit 2.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { checkDriveFlags } from "../core/state/drive.js"
import { BadInput } from "./errors.js"
import { driveRun } from "./fleet/drive.js"
import { fleetInitRun } from "./fleet/init.js"
import { ExitWith } from "./notify.js"
import { CurrentIo, diagnostic } from "./output.js"

const text = (name: string, pseudo: string, description: string) =>
  Options.text(name).pipe(Options.withPseudoName(pseudo), Options.withDescription(description), Options.optional)

export const fleetInitCommand = Command.make(
  "init",
  {
    url: text("url", "URL", "The server: postgres://USER:PASSWORD@HOST:PORT/DB (default: $OCPOOL_STATE_URL). The password is never printed."),
    schema: text("schema", "NAME", "The schema the pool's tables live in (default ocpool): lower-case letters, digits and _")
  },
  (a) =>
    Effect.gen(function* () {
      const io = yield* CurrentIo
      yield* fleetInitRun({ url: Option.getOrUndefined(a.url), schema: Option.getOrUndefined(a.schema) }, io.env).pipe(
        Effect.catchTag("FleetUnreachable", (e) => Effect.zipRight(diagnostic(e.message), new ExitWith({ code: 1 })))
      )
    })
).pipe(
  Command.withDescription(
    "Set up fleet mode (several machines sharing one pool through PostgreSQL): connect to the server, create the schema and run its migrations (idempotent: safe to run again, and from two hosts at once), then print the URL with its password masked, the schema version and the plugin option to add (\"state\": { \"backend\": \"postgres\", \"url\": …, \"schema\": … }); the real URL can be given by OCPOOL_STATE_URL instead of the config. Exit 0; 1 if the server cannot be reached or refuses (one line: the masked URL and why); 2 without a URL or with a bad --url or --schema."
  )
)

export const fleetDriveCommand = Command.make(
  "drive",
  {
    config: text("config", "FILE", "Required. The plugin's options as a JSON object (state, stateDir, lockWaitMs, models, …); OCPOOL_STATE_URL and OCPOOL_HOST_ID apply"),
    picks: text("picks", "N", "Required. How many spawns of base explore to route (a positive integer)"),
    hold: text("hold", "H", "Required. Claims held at most: before a pick that would make H+1, the oldest is released as a cancelled task"),
    seed: text("seed", "S", "Required. Seed of the pauses (an integer 0 or more)"),
    pauseMs: text("pause-ms", "P", "Required. After each pick, a pause drawn from 0..P ms (seeded)"),
    startAt: text("start-at", "EPOCH_MS", "Required. Wall-clock time (epoch ms) of the first pick: the driver boots, prints its start line and waits until then"),
    coolAfter: text("cool-after", "K", "Optional, with --cool-model and --cool-ms: right after the K-th pick, cool --cool-model for --cool-ms as the plugin does on a 429 (rate_limit, model scope)"),
    coolModel: text("cool-model", "MODEL", "The model the 429 comes from (provider/model, one of the pool's slots)"),
    coolMs: text("cool-ms", "W", "The 429's retry-after, in ms: the cooldown's window (as in the plugin, under 1 s cools for 1 s; over 7 days counts as no stated window)")
  },
  (a) =>
    Effect.gen(function* () {
      const checked = checkDriveFlags({
        config: Option.getOrUndefined(a.config),
        picks: Option.getOrUndefined(a.picks),
        hold: Option.getOrUndefined(a.hold),
        seed: Option.getOrUndefined(a.seed),
        pauseMs: Option.getOrUndefined(a.pauseMs),
        startAt: Option.getOrUndefined(a.startAt),
        coolAfter: Option.getOrUndefined(a.coolAfter),
        coolModel: Option.getOrUndefined(a.coolModel),
        coolMs: Option.getOrUndefined(a.coolMs)
      })
      if (checked._tag === "Problem") return yield* new BadInput({ message: checked.message })
      yield* driveRun(checked.value, process.env)
    })
).pipe(
  Command.withDescription(
    "A driver for tests, benchmarks and the demo: boot the plugin's hooks in this process over the backend FILE chooses, wait until --start-at, then route base explore N times through the plugin's own route path (the shared-state port, the pure pick), holding at most H claims (the oldest released as a cancelled task, which never clears a cooldown) and pausing a seeded 0..P ms after each pick; with --cool-after, feed a 429 of MODEL with retry-after W; at the end release everything. Stdout: one JSON object per line: {\"ev\":\"start\",\"host\",\"pid\",\"backend\"}, {\"ev\":\"pick\",\"host\",\"key\",\"model\",\"slot\",\"pass\",\"load\",\"cap\",\"cooling\",\"at\"} (load: the model's fleet-wide live claims with this one; cap: 2 × weight; cooling: the models cooling in the snapshot the pick used; at: epoch ms after the commit), {\"ev\":\"release\",\"host\",\"key\",\"at\"}, {\"ev\":\"cool\",\"host\",\"model\",\"until\",\"at\"}, {\"ev\":\"done\",\"host\",\"picks\",\"failOpens\",\"fallbacks\"}; logs on stderr. Exit 0; 2 with a bad flag or an unreadable or invalid config file."
  )
)

export const fleetCommand = Command.make("fleet").pipe(
  Command.withDescription("Fleet mode (several machines sharing one pool through PostgreSQL): set it up, or drive it."),
  Command.withSubcommands([fleetInitCommand, fleetDriveCommand])
)
