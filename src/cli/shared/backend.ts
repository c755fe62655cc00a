/**
 * Which shared-state backend the CLI reads (fleet mode, issue 22). The CLI does not read opencode's
 * config: `OCPOOL_STATE_URL` (a `postgres://` URL) selects the PostgreSQL backend with the default
 * schema `ocpool`, its state directory (`--state-dir`, OCPOOL_STATE_DIR, the default) being the
 * fallback's; anything else is the file backend, as before. An invalid URL is one warning and the files.
 */
import { Clock, Effect, Layer } from "effect"
import { parseStateBackend, secretsOf, type StateBackend } from "../../core/state/fleet.js"
import { backendOptions, sharedStateLayer, withReadableFiles } from "../../layers/state/sharedStateLayer.js"
import { SharedState, type FleetAnswer, type SharedStateStats } from "../../services/state/SharedState.js"
import { StateDir } from "../../services/state/StateDir.js"
import type { FleetFacts } from "../../core/status.js"
import { ownHostId } from "../../layers/state/StateDirFile.js"

/**
 * How long a CLI view waits for the server (connecting, migrating, each read) before it shows the
 * state directory instead. Longer than a spawn's lockWaitMs: nothing waits on a view, and a managed
 * server across the internet needs a TLS handshake and a few round trips the first time.
 */
export const CLI_FLEET_WAIT_MS = 3_000

export interface CliBackend {
  readonly state: StateBackend
  /** Why OCPOOL_STATE_URL was not used (URL masked). */
  readonly warnings: ReadonlyArray<string>
}

/** The backend the environment chooses for the CLI. */
export const cliBackend = (env: Readonly<Record<string, string | undefined>> = process.env): CliBackend => withReadableFiles(parseStateBackend(undefined, env))

/**
 * The port a CLI view reads through: the file backend without the lock (views never take it), or
 * PostgreSQL waiting at most CLI_FLEET_WAIT_MS per call, its fallback on the `StateDir` provided.
 */
export const cliStateLayer = (backend: CliBackend): Layer.Layer<SharedState, never, StateDir> =>
  sharedStateLayer(backend.state.backend === "postgres" ? backendOptions(backend.state, CLI_FLEET_WAIT_MS, true) : { backend: "sqlite", lockWaitMs: 0, view: true })

/** What the port says of the fleet at `now`, and its counters (fallbacks made by this process). */
export const fleetOf = (now: number) =>
  Effect.flatMap(SharedState, (s) => Effect.zip(s.fleet(now), s.stats)).pipe(Effect.map(([fleet, stats]): { readonly fleet: FleetAnswer; readonly stats: SharedStateStats } => ({ fleet, stats })))

/**
 * Text that may name the server (a driver's reason) with the URL's password replaced by `***`,
 * however it is spelled (as given or percent-decoded): a second guard behind `maskUrl`.
 */
export const scrubPassword = (text: string, url: string | undefined): string => {
  if (url === undefined) return text
  const forms = secretsOf(url).flatMap((secret) => {
    try {
      return [secret, decodeURIComponent(secret)]
    } catch {
      // not percent-encoded text: only the raw form is scrubbed
      return [secret]
    }
  })
  // a password of a few characters would mangle every word holding them: maskUrl is the guard there
  return forms.filter((p) => p.length >= 4).reduce((t, p) => t.split(p).join("***"), text)
}

/** The raw URL of a PostgreSQL backend (for scrubbing), else undefined. */
export const rawUrl = (backend: CliBackend): string | undefined => (backend.state.backend === "postgres" ? backend.state.url : undefined)

/** The port's fleet answer as the status view takes it (NotFleet: none), its free text scrubbed of the password. */
export const fleetFacts = (answer: FleetAnswer, fallbacks: number, url: string | undefined): FleetFacts | undefined => {
  const scrub = (t: string) => scrubPassword(t, url)
  switch (answer._tag) {
    case "NotFleet":
      return undefined
    case "Unreachable":
      return { ...answer, url: scrub(answer.url), reason: scrub(answer.reason), fallbacks }
    case "Fleet":
      return { _tag: "Fleet", view: { ...answer.view, url: scrub(answer.view.url) }, fallbacks }
  }
}

/**
 * The fleet alone (`ocpool permits`, `ocpool doctor`): undefined with the file backend, else what a
 * port over PostgreSQL says of it (no state directory needed: the fleet is never read from files).
 */
export const readFleet = (backend: CliBackend = cliBackend()): Effect.Effect<FleetFacts | undefined> =>
  Effect.suspend(() => {
    if (backend.state.backend !== "postgres") return Effect.succeed(undefined)
    const dir = Layer.succeed(StateDir, { dir: undefined, trusted: false, pid: process.pid, host: ownHostId(), startTime: null })
    return Effect.flatMap(Clock.currentTimeMillis, (now) => fleetOf(now)).pipe(
      Effect.map(({ fleet, stats }) => fleetFacts(fleet, stats.fallbacks ?? 0, rawUrl(backend))),
      Effect.provide(cliStateLayer(backend).pipe(Layer.provide(dir))),
      Effect.scoped
    )
  })
