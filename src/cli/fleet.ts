/**
 * `ocpool fleet` (issue 22): fleet mode's set-up.
 * - `fleet init --url URL [--schema NAME]`: check the connection, create and migrate the schema, print the option.
 * The fleet driver for tests, benchmarks and the demo is a development entry, not a command of `ocpool`
 * (issue 34): src/dev/fleetDrive.ts, `node dist/dev-fleet-drive.js`.
 */
import { Command } from "@effect/cli"
import { Effect, Option } from "effect"
import { fleetInitRun } from "./fleet/init.js"
import { ExitWith } from "./notify.js"
import { CurrentIo, diagnostic } from "./output.js"
import { commandGroup } from "./shared/commandGroup.js"
import { text } from "./shared/textFlag.js"


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

export const fleetCommand = commandGroup("fleet", "Fleet mode (several machines sharing one pool through PostgreSQL): set it up.", [fleetInitCommand])
