/**
 * The ssh hop (SPEC §10.5, §10.6): the notification becomes one payload argument for the desktop's
 * `ocpool receive`; ssh is killed after HOP_KILL_MS. A failed hop is reported, never retried through a
 * local notifier (US-14.4): on a remote machine a local popup would show on nobody's screen.
 */
import { Effect, Layer } from "effect"
import { sshArgs } from "../core/notify/channel.js"
import { withHostSuffix } from "../core/notify/content.js"
import { HOP_KILL_MS } from "../core/notify/limits.js"
import { encodeClose, encodeShow } from "../core/notify/payload.js"
import { Notifier, type Delivery, type NotifierService } from "../services/Notifier.js"
import { failureOf, runTool, type Env } from "./runArgv.js"

export interface SshOptions {
  /** The ssh host or alias (`OCPOOL_NOTIFY_HOST`, `notifyHost` or `ocpool-desktop`). */
  readonly host: string
  /** This machine's short host name: the message's ` [<host>]` suffix and the fade key's prefix. */
  readonly shortHost: string
  /** The environment ssh is looked up in and run with (default: this process's). */
  readonly env?: Env | undefined
}

export const makeSshNotifier = (o: SshOptions): NotifierService => {
  const hop = (payload: string): Effect.Effect<Delivery> =>
    runTool("ssh", sshArgs(o.host, payload), { timeoutMs: HOP_KILL_MS, env: o.env ?? process.env }).pipe(
      // the receiver's own complaint (`no notifier …`, exit 75) is the last line ssh relays
      Effect.map((r): Delivery => {
        const reason = failureOf("ssh", r, HOP_KILL_MS, "last")
        return reason === undefined ? { ok: true, channel: "ssh" } : { ok: false, channel: "ssh", reason }
      })
    )
  return {
    channel: "ssh",
    // an empty key (a one-off from `ocpool notify`) stays empty: nothing to fade on the desktop
    send: (n, key) => hop(encodeShow(key === "" ? "" : `${o.shortHost}:${key}`, { ...n, message: withHostSuffix(n.message, o.shortHost) })),
    close: (key) => hop(encodeClose(key === "" ? "" : `${o.shortHost}:${key}`))
  }
}

export const NotifierSsh = (o: SshOptions) => Layer.succeed(Notifier, makeSshNotifier(o))
