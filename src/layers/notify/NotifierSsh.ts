/**
 * The ssh hop (SPEC §10.5, §10.6): the notification becomes one payload for the desktop's `ocpool
 * receive`, sent as ssh's single remote argument in its shell-inert token form (core/notify/hopToken.ts:
 * a host reached without the forced command hands that argument to a login shell, which can then only
 * fail to find a program of that name); ssh is killed after HOP_KILL_MS. A failed hop is reported,
 * never retried through a local notifier (US-14.4): on a remote machine a local popup would show on
 * nobody's screen.
 */
import { Effect, Layer } from "effect"
import { sshArgs } from "../../core/notify/channel.js"
import { withHostSuffix } from "../../core/notify/content.js"
import { probeAnswer, shellAnswer, shellFailure, type ProbeAnswer } from "../../core/notify/hopToken.js"
import { HOP_KILL_MS } from "../../core/notify/limits.js"
import { encodeClose, encodeProbe, encodeShow } from "../../core/notify/payload.js"
import { Notifier, type Delivery, type NotifierService } from "../../services/notify/Notifier.js"
import { failureOf, runTool, type Env, type RunResult } from "../process/tools.js"
import { spanned } from "../hotPath.js"

export interface SshOptions {
  /** The ssh host or alias (`OCPOOL_NOTIFY_HOST`, `notifyHost` or `ocpool-desktop`). */
  readonly host: string
  /** This machine's short host name: the message's ` [<host>]` suffix and the fade key's prefix. */
  readonly shortHost: string
  /** The environment ssh is looked up in and run with (default: this process's). */
  readonly env?: Env | undefined
}

const runHop = (host: string, payload: string, env: Env | undefined): Effect.Effect<RunResult> =>
  runTool("ssh", sshArgs(host, payload), { timeoutMs: HOP_KILL_MS, env: env ?? process.env })

/**
 * Why a hop run did not deliver, or `undefined`. The receiver's own complaint (`no notifier …`, exit
 * 75) is the last line ssh relays; when a login shell answered instead (no forced command on the
 * host), the reason says so and names the fix.
 */
export const hopFailure = (r: RunResult): string | undefined => {
  const reason = failureOf("ssh", r, HOP_KILL_MS, "last")
  if (reason === undefined || r.code === null) return reason
  const shell = shellAnswer(r.stderr)
  return shell === undefined ? reason : shellFailure(`ssh exited ${r.code}`, shell)
}

export const makeSshNotifier = (o: SshOptions): NotifierService => {
  const hop = (payload: string): Effect.Effect<Delivery> =>
    runHop(o.host, payload, o.env).pipe(
      Effect.map((r): Delivery => {
        const reason = hopFailure(r)
        return reason === undefined ? { ok: true, channel: "ssh" } : { ok: false, channel: "ssh", reason }
      })
    )
  return {
    channel: "ssh",
    // an empty key (a one-off from `ocpool notify`) stays empty: nothing to fade on the desktop
    send: (n, key) => spanned(hop(encodeShow(key === "" ? "" : `${o.shortHost}:${key}`, { ...n, message: withHostSuffix(n.message, o.shortHost) })), "Notifier.send"),
    close: (key) => spanned(hop(encodeClose(key === "" ? "" : `${o.shortHost}:${key}`)), "Notifier.close")
  }
}

export const NotifierSsh = (o: SshOptions) => Layer.succeed(Notifier, makeSshNotifier(o))

/** What answered the probe, with the run's failure (`ssh exited 255: …`, a timeout) when there was one. */
export interface HopProbe {
  readonly answer: ProbeAnswer
  readonly failure: string | undefined
}

/**
 * `ocpool doctor --probe`'s question to the hop host: the probe payload, as a token like every hop
 * (inert in a shell; `ocpool receive` shows nothing for it and answers PROBE_ANSWER), bounded by
 * HOP_KILL_MS like every hop.
 */
export const probeHop = (host: string, env?: Env): Effect.Effect<HopProbe> =>
  runHop(host, encodeProbe(), env).pipe(
    Effect.map((r) => ({ answer: r.timedOut || r.spawnError !== undefined ? { _tag: "NoAnswer" as const } : probeAnswer(r.code, r.stderr), failure: failureOf("ssh", r, HOP_KILL_MS, "last") }))
  )
