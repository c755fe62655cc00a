/**
 * The desktop notifier (SPEC §10.5, §10.8): `notify-send` on Linux and the BSDs, `osascript` on macOS.
 * Each run is bounded by NOTIFY_TIMEOUT_MS; a popup is delivered when the program exits 0. On Linux,
 * with fade on, the popup is raised with `--print-id` and closed later through `gdbus`.
 */
import { Effect, Layer } from "effect"
import { closeArgs, notifySendArgs, osascriptArgs, printedId } from "../../core/notify/channel.js"
import { NOTIFY_TIMEOUT_MS } from "../../core/notify/limits.js"
import { Notifier, type Delivery, type NotifierService } from "../../services/notify/Notifier.js"
import { failureOf, runTool, type Env } from "../process/tools.js"
import { spanned, traced } from "../hotPath.js"

export interface DesktopOptions {
  /** `process.platform`: `darwin` uses osascript, anything else notify-send. */
  readonly platform: string
  /** The environment the programs are looked up in (PATH) and run with. */
  readonly env: Env
  /** Raise popups with `--print-id` so they can be closed (Linux only). */
  readonly fade: boolean
}

export const FADE_UNSUPPORTED_MAC = "fade is unsupported on macOS"

export const makeDesktopNotifier = (o: DesktopOptions): NotifierService => {
  const run = { timeoutMs: NOTIFY_TIMEOUT_MS, env: o.env }
  if (o.platform === "darwin") {
    return {
      channel: "osascript",
      send: traced("Notifier.send")(function* (n) {
        const reason = failureOf("osascript", yield* runTool("osascript", osascriptArgs(n), run), NOTIFY_TIMEOUT_MS, "first")
        const d: Delivery = reason === undefined ? { ok: true, channel: "osascript" } : { ok: false, channel: "osascript", reason }
        return d
      }),
      close: () => spanned(Effect.succeed<Delivery>({ ok: false, channel: "osascript", reason: FADE_UNSUPPORTED_MAC }), "Notifier.close")
    }
  }
  return {
    channel: "notify-send",
    send: traced("Notifier.send")(function* (n) {
      const r = yield* runTool("notify-send", notifySendArgs(n, o.fade), run)
      const reason = failureOf("notify-send", r, NOTIFY_TIMEOUT_MS, "first")
      if (reason !== undefined) return { ok: false, channel: "notify-send", reason }
      const id = o.fade ? printedId(r.stdout) : undefined
      return id === undefined ? { ok: true, channel: "notify-send" } : { ok: true, channel: "notify-send", id }
    }),
    close: traced("Notifier.close")(function* (_key, ids) {
      let failed: string | undefined
      for (const id of ids) {
        const r = yield* runTool("gdbus", closeArgs(id), run)
        const reason = failureOf("gdbus", r, NOTIFY_TIMEOUT_MS, "first")
        failed ??= reason === undefined ? undefined : `closing popup ${id}: ${reason}`
      }
      return failed === undefined ? { ok: true, channel: "notify-send" } : { ok: false, channel: "notify-send", reason: failed }
    })
  }
}

export const NotifierDesktop = (o: DesktopOptions) => Layer.succeed(Notifier, makeDesktopNotifier(o))
