/**
 * `ocpool doctor`'s notification checks (SPEC §10.5, §10.8): the channel `auto` would select
 * (`notifier`), the hop host (`ssh-hop`), closing by fade (`fade`), and with `--probe` a test
 * notification (`probe`) and the hop host's forced command (`hop-command`).
 */
import { Effect } from "effect"
import { hostname } from "node:os"
import { DESKTOP_ALIAS, hopHost, isRemote, NO_HOST_REASON, type Selected } from "../../core/notify/channel.js"
import { shortHostname } from "../../core/notify/content.js"
import { FORCED_COMMAND_ADVICE } from "../../core/notify/hopToken.js"
import { homeDir } from "../../layers/fs/xdg.js"
import { ocpoolLine } from "../../layers/install/installation.js"
import { FADE_UNSUPPORTED_MAC } from "../../layers/notify/NotifierDesktop.js"
import { makeNotifier, readSshConfig, selectNotifier } from "../../layers/notify/NotifierSelect.js"
import { probeHop, type HopProbe } from "../../layers/notify/NotifierSsh.js"
import { which } from "../../layers/process/tools.js"
import { testNotification } from "../notify.js"
import { sessionBusMissing } from "../receive.js"
import { bareOcpool, failedItself, guarded, type Check } from "./check.js"

/** The facts the notification checks read: the environment (PATH, SSH_*, OCPOOL_NOTIFY_HOST), the platform and the home directory. */
export interface NotifyFacts {
  readonly env: NodeJS.ProcessEnv
  readonly platform: string
  readonly home: string | undefined
}

export const liveFacts = (): NotifyFacts => ({ env: process.env, platform: process.platform, home: homeDir() })

const selectionOptions = (f: NotifyFacts, fade: boolean) => ({ via: "auto" as const, notifyHost: undefined, fade, env: f.env, platform: f.platform, home: f.home })

/** A `none` selection's reason followed by what it means. */
const noChannel = (reason: string): string => `${reason}${reason.includes(":") ? ";" : ":"} no notification channel exists`

/**
 * Which channel `auto` would use here (SPEC §10.5), as the plugin selects it: its name (`ssh to <host>`
 * for the hop), or `warn` with the reason when it is `none`.
 */
export const notifierDetail = (selected: Selected, busMissing?: string, ocpool: (args: string) => string = bareOcpool): Check => {
  switch (selected.channel) {
    case "none":
      return { id: "notifier", status: "warn", detail: noChannel(selected.reason) }
    case "ssh":
      return { id: "notifier", status: "ok", detail: `ssh to ${selected.host} (this is an SSH session)` }
    case "notify-send":
      // notify-send is installed, but without a session bus it has no daemon to show anything
      return busMissing === undefined
        ? { id: "notifier", status: "ok", detail: selected.channel }
        : { id: "notifier", status: "warn", detail: `notify-send, but ${busMissing}: nothing would show (${ocpool("doctor --probe")} tries)` }
    default:
      return { id: "notifier", status: "ok", detail: selected.channel }
  }
}

/** Where the hop host comes from (SPEC §10.5): `OCPOOL_NOTIFY_HOST`, then `Host ocpool-desktop` in ~/.ssh/config. */
export const sshHopCheck = (f: NotifyFacts): Check => {
  const fromEnv = f.env.OCPOOL_NOTIFY_HOST?.trim() ?? ""
  const remote = isRemote(f.env)
  if (fromEnv !== "") return { id: "ssh-hop", status: "ok", detail: `host ${fromEnv} (from OCPOOL_NOTIFY_HOST)${remote ? "" : "; used only when opencode runs in an SSH session"}` }
  const config = readSshConfig(f.home)
  if (config !== undefined && hopHost(undefined, undefined, config) !== undefined) {
    return { id: "ssh-hop", status: "ok", detail: `host ${DESKTOP_ALIAS} (from ~/.ssh/config)${remote ? "" : "; used only when opencode runs in an SSH session"}` }
  }
  return remote
    ? { id: "ssh-hop", status: "warn", detail: `not configured, and this is an SSH session: notifications from here go nowhere (${NO_HOST_REASON})` }
    : { id: "ssh-hop", status: "ok", detail: "not configured (only needed when opencode runs in an SSH session)" }
}

/** Whether popups can be closed by fade (SPEC §10.8): gdbus on Linux; unsupported on macOS. */
export const fadeCheck = (f: NotifyFacts): Check => {
  if (f.platform === "darwin") return { id: "fade", status: "warn", detail: FADE_UNSUPPORTED_MAC }
  if (f.platform !== "linux") return { id: "fade", status: "warn", detail: `fade is unsupported on ${f.platform}` }
  const gdbus = which("gdbus", f.env)
  return gdbus !== undefined ? { id: "fade", status: "ok", detail: `gdbus (${gdbus})` } : { id: "fade", status: "warn", detail: "gdbus is not on PATH: popups stay until dismissed" }
}

/** The title of the `--probe` notification. */
export const PROBE_TITLE = "opencode — ocpool doctor --probe"

/** `--probe`: a test notification through the channel `auto` selects, and whether it was delivered. */
export const probeCheck = (f: NotifyFacts, hostName: string = hostname()): Effect.Effect<Check> =>
  Effect.gen(function* () {
    const notifier = makeNotifier({ ...selectionOptions(f, false), hostname: hostName })
    const d = yield* notifier.send(testNotification(PROBE_TITLE, shortHostname(hostName)), "")
    return d.ok
      ? { id: "probe", status: "ok" as const, detail: `test notification delivered via ${d.channel}` }
      : { id: "probe", status: "fail" as const, detail: `test notification not delivered via ${d.channel}: ${d.reason ?? "no reason given"}` }
  })

/** The hop host the checks name: `OCPOOL_NOTIFY_HOST`, then the alias `ocpool-desktop` of ~/.ssh/config (SPEC §10.5). */
const configuredHopHost = (f: NotifyFacts): string | undefined => hopHost(f.env.OCPOOL_NOTIFY_HOST, undefined, readSshConfig(f.home))

/** The `hop-command` check from what answered the probe (see `hopCommandCheck`). */
export const hopCommandDetail = (host: string, p: HopProbe): Check => {
  switch (p.answer._tag) {
    case "Receiver":
      return { id: "hop-command", status: "ok", detail: `${host} answers with its forced command: ocpool receive read the probe` }
    case "Shell":
      return {
        id: "hop-command",
        status: "warn",
        detail: `${host} ran the probe in a login shell, not the forced command ocpool receive (${p.answer.line}): ${FORCED_COMMAND_ADVICE}; otherwise notification text reaches a shell there`
      }
    case "OldReceiver":
      return {
        id: "hop-command",
        status: "warn",
        detail: `${host} answers with an ocpool receive older than the hop token: it would show every notification as an unrecognised message; update opencode-pool on the desktop`
      }
    case "NoAnswer":
      return p.failure === undefined
        ? { id: "hop-command", status: "warn", detail: `${host} did not answer the probe as ocpool receive does (ssh exited 0): is the forced command of its key ocpool receive?` }
        : { id: "hop-command", status: "warn", detail: `${host} could not be probed: ${p.failure}` }
  }
}

/**
 * `--probe`, when a hop host is configured: whether that host runs `ocpool receive` as the forced
 * command of the hop key. It is sent the probe payload as a hop token (one word a shell cannot act
 * on; `ocpool receive` shows nothing and answers a fixed line), within HOP_KILL_MS. A login shell that
 * answers instead (an ordinary ssh host, a key without `command="ocpool receive"`) is a warning.
 */
export const hopCommandCheck = (f: NotifyFacts): Effect.Effect<ReadonlyArray<Check>> => {
  const host = configuredHopHost(f)
  return host === undefined ? Effect.succeed([]) : probeHop(host, f.env).pipe(Effect.map((p) => [hopCommandDetail(host, p)]))
}

/** The checks of the channel `auto` selects here: `notifier`, `ssh-hop`, `fade`. */
export const notifyChecks = (facts: NotifyFacts): Effect.Effect<ReadonlyArray<Check>> =>
  Effect.map(
    Effect.all([
      guarded("notifier", () => notifierDetail(selectNotifier(selectionOptions(facts, true)), sessionBusMissing(facts.env, facts.platform, process.getuid?.()), (args) => ocpoolLine(args, facts.env))),
      guarded("ssh-hop", () => sshHopCheck(facts)),
      guarded("fade", () => fadeCheck(facts))
    ]),
    (groups) => groups.flat()
  )

/** `--probe`: the hop host's forced command and the test notification, side by side (both within HOP_KILL_MS: an unreachable host costs one timeout, not two). */
export const probeChecks = (facts: NotifyFacts): Effect.Effect<ReadonlyArray<Check>> =>
  Effect.map(
    Effect.all(
      [
        Effect.suspend(() => hopCommandCheck(facts)).pipe(Effect.catchAllCause(failedItself("hop-command"))),
        probeCheck(facts).pipe(
          Effect.map((c) => [c]),
          Effect.catchAllCause(failedItself("probe"))
        )
      ],
      { concurrency: "unbounded" }
    ),
    ([hop, sent]) => [...hop, ...sent]
  )
