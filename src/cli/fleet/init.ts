/**
 * `ocpool fleet init --url URL [--schema NAME]` (issue 22 item 4): connects to PostgreSQL through the
 * shared-state port (the same PostgreSQL backend the plugin runs on), which creates the schema and runs
 * the migrations, then prints the masked URL, the schema version and the plugin option to add. The
 * password is never printed: the option shows the URL masked, and `OCPOOL_STATE_URL` can carry the real one.
 */
import { Console, Effect, Layer, Logger, LogLevel, Schema } from "effect"
import { checkUrl, DEFAULT_SCHEMA, FLEET_LEASE_MS, maskUrl, type StateBackend } from "../../core/state/fleet.js"
import { printable } from "../../core/printable.js"
import { backendOptions, sharedStateLayer, pgFileProblem } from "../../layers/state/sharedStateLayer.js"
import { StateDirFile } from "../../layers/state/StateDirFile.js"
import { SharedState } from "../../services/state/SharedState.js"
import { AppLog } from "../../services/opencode/AppLog.js"
import { BadInput } from "../errors.js"

/** How long `fleet init` waits for the server (connect, migrate, answer). */
export const INIT_WAIT_MS = 15_000

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Exit 1: the server did not answer, or refused (its reason), or the URL did not select PostgreSQL; the URL masked. */
export class FleetUnreachable extends Schema.TaggedError<FleetUnreachable>()("FleetUnreachable", {
  problem: Schema.Literal("not-fleet", "unreachable"),
  /** The URL, masked (`maskUrl`): never the password. */
  url: Schema.String,
  /** The driver's reason, the password taken out (unreachable). */
  detail: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return this.problem === "not-fleet"
      ? `fleet init: ${printable(this.url)} did not select the PostgreSQL backend`
      : `cannot reach PostgreSQL at ${printable(this.url)}: ${printable(this.detail ?? "")}`
  }
}

export interface FleetInitFlags {
  readonly url: string | undefined
  readonly schema: string | undefined
}

/** `reason` with every occurrence of the URL's password replaced (a driver may quote the URL). */
const withoutPassword = (reason: string, url: string): string => {
  let password = ""
  try {
    password = decodeURIComponent(new URL(url).password)
  } catch {
    // not parsable: checkUrl refused it before
  }
  return password.length >= 3 ? reason.split(password).join("***") : reason
}

/** The option to add to the plugin's entry in opencode's config. */
export const stateOptionLine = (masked: string, schema: string): string =>
  `"state": { "backend": "postgres", "url": ${JSON.stringify(masked)}, "schema": ${JSON.stringify(schema)} }`

export const fleetInitRun = (flags: FleetInitFlags, env: Readonly<Record<string, string | undefined>>) =>
  Effect.gen(function* () {
    const url = flags.url ?? (env.OCPOOL_STATE_URL === "" ? undefined : env.OCPOOL_STATE_URL)
    if (url === undefined) return yield* new BadInput({ message: "fleet init needs --url postgres://USER:PASSWORD@HOST:PORT/DB (or OCPOOL_STATE_URL)", option: "--url" })
    const bad = checkUrl(url)
    if (bad !== undefined) return yield* new BadInput({ message: `--url ${printable(maskUrl(url))} invalid (${bad})`, option: "--url", value: maskUrl(url) })
    const unreadable = pgFileProblem(url)
    if (unreadable !== undefined) return yield* new BadInput({ message: `--url ${printable(maskUrl(url))}: ${unreadable}`, option: "--url", value: maskUrl(url) })
    const schema = flags.schema ?? DEFAULT_SCHEMA
    if (!SCHEMA_NAME.test(schema)) return yield* new BadInput({
        message: `--schema ${JSON.stringify(schema)} invalid (lower-case letters, digits and _, at most 63, not starting with a digit)`,
        option: "--schema",
        value: schema
      })
    const masked = maskUrl(url)
    const state: StateBackend = { backend: "postgres", url, schema, leaseMs: FLEET_LEASE_MS, from: "option" }
    // the backend's own log lines (a fallback warning) say less than the one line below: not printed;
    // no logger is installed either, so the migrator's debug lines stay out of the output
    const log = Layer.succeed(AppLog, { log: () => Effect.void })
    const layer = sharedStateLayer(backendOptions(state, INIT_WAIT_MS, true)).pipe(Layer.provideMerge(StateDirFile(undefined, { ...env })), Layer.provide(log))
    const answer = yield* Effect.flatMap(SharedState, (s) => Effect.flatMap(Effect.clockWith((c) => c.currentTimeMillis), (now) => s.fleet(now))).pipe(
      Effect.provide(layer),
      Logger.withMinimumLogLevel(LogLevel.Info)
    )
    if (answer._tag === "NotFleet") return yield* new FleetUnreachable({ problem: "not-fleet", url: masked })
    if (answer._tag === "Unreachable") return yield* new FleetUnreachable({ problem: "unreachable", url: masked, detail: withoutPassword(answer.reason, url) })
    const v = answer.view
    yield* Console.log(
      [
        `PostgreSQL ${printable(masked)} answers (round trip ${v.roundTripMs.toFixed(1)} ms); schema ${v.schema} at version ${v.schemaVersion}`,
        "add this to the plugin's options in opencode's config (on every host of the fleet):",
        `  ${stateOptionLine(masked, schema)}`,
        "then give the real URL (with the password) by the environment instead of the config: OCPOOL_STATE_URL=postgres://USER:PASSWORD@HOST:PORT/DB",
        "(OCPOOL_STATE_URL wins over state.url; set OCPOOL_HOST_ID to name each host, else its hostname is used)"
      ].join("\n")
    )
  })
