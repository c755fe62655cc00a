/**
 * `ocpool receive` (SPEC §10.6, §10.8): the forced command of the hop key on the desktop. The payload is
 * read only from `SSH_ORIGINAL_COMMAND`; arguments are ignored (a forced command may be given some, and
 * must never fail with a usage error). It arrives as one hop token word, `ocpool-notify-b64/1.<base64url
 * of the payload>` (core/notify/hopToken.ts, docs/DECISIONS.md), or as the plain payload of §10.6; a
 * malformed token is shown as text. It is never evaluated: every field is whitelisted or cleaned by
 * `decodePayload`, and reaches the local desktop notifier as argv data only. A `probe` payload (`ocpool
 * doctor --probe`) shows nothing and answers PROBE_ANSWER on stderr. stdout stays empty (ssh would
 * carry it back); every line on stderr starts with `ocpool receive:`. Exit 0 when shown (or when there
 * is nothing to show or close, or for a probe); 75 when it could not be shown or closed.
 */
import { Command } from "@effect/cli"
import { Clock, Console, Effect } from "effect"
import { statSync } from "node:fs"
import type { Notification } from "../core/notify/content.js"
import { PROBE_ANSWER } from "../core/notify/hopToken.js"
import { decodePayload, type Received } from "../core/notify/payload.js"
import { printable } from "../core/printable.js"
import { FADE_UNSUPPORTED_MAC, makeDesktopNotifier } from "../layers/notify/NotifierDesktop.js"
import { selectNotifier } from "../layers/notify/NotifierSelect.js"
import { openPopupsFile } from "../layers/notify/PopupsFile.js"
import { homeDir } from "../layers/fs/xdg.js"
import type { NotifierService } from "../services/notify/Notifier.js"
import { ExitWith, NOT_DELIVERED } from "./notify.js"

/** One stderr line of the receiver. */
const say = (line: string): Effect.Effect<void> => Console.error(`ocpool receive: ${printable(line)}`)

/** Whether a socket is at `path`. */
const isSocket = (path: string): boolean => {
  try {
    return statSync(path).isSocket()
  } catch {
    return false
  }
}

/** Where a Linux user's session bus listens (systemd's default). */
const busSocket = (uid: number | string): string => `/run/user/${uid}/bus`

/**
 * The environment the notifier's programs run with: on Linux, `DBUS_SESSION_BUS_ADDRESS` is set to
 * the user's bus socket when it is unset and that socket exists (an ssh session has no bus address of
 * its own). This process's environment is not changed.
 */
export const receiverEnv = (env: NodeJS.ProcessEnv, platform: string, uid: number | undefined, socketAt: (path: string) => boolean = isSocket): NodeJS.ProcessEnv => {
  // the payload is not handed on: the notifier's programs get the fields as argv, nothing else of it
  const { SSH_ORIGINAL_COMMAND: _payload, ...rest } = env
  if (platform !== "linux" || (rest.DBUS_SESSION_BUS_ADDRESS ?? "") !== "" || uid === undefined) return rest
  const socket = busSocket(uid)
  return socketAt(socket) ? { ...rest, DBUS_SESSION_BUS_ADDRESS: `unix:path=${socket}` } : rest
}

/**
 * Why notify-send could not reach a notification daemon here (Linux: no session bus address, no
 * `/run/user/<uid>/bus`, and no X display for D-Bus to autolaunch on); `undefined` when one is there.
 */
export const sessionBusMissing = (env: NodeJS.ProcessEnv, platform: string, uid: number | undefined, socketAt: (path: string) => boolean = isSocket): string | undefined => {
  if (platform !== "linux") return undefined
  if ((env.DBUS_SESSION_BUS_ADDRESS ?? "") !== "" || (env.DISPLAY ?? "") !== "" || (env.WAYLAND_DISPLAY ?? "") !== "") return undefined
  if (uid !== undefined && socketAt(busSocket(uid))) return undefined
  return `no D-Bus session bus here (DBUS_SESSION_BUS_ADDRESS unset, no ${busSocket(uid ?? "UID")}, no $DISPLAY)`
}

type Local = { readonly _tag: "Local"; readonly notifier: NotifierService } | { readonly _tag: "None"; readonly reason: string }

/** The local desktop notifier (never the hop), raising with `--print-id` when `fade` is set. */
const localNotifier = (env: NodeJS.ProcessEnv, platform: string, fade: boolean): Local => {
  const selected = selectNotifier({ via: "local", notifyHost: undefined, fade, env, platform, home: homeDir(env) })
  return selected.channel === "notify-send" || selected.channel === "osascript"
    ? { _tag: "Local", notifier: makeDesktopNotifier({ platform, env, fade }) }
    : { _tag: "None", reason: selected.channel === "none" ? selected.reason : `no local notifier on ${platform}` }
}

const show = (n: Notification, key: string, env: NodeJS.ProcessEnv, platform: string) =>
  Effect.gen(function* () {
    const fade = platform === "linux" && key !== ""
    const local = localNotifier(env, platform, fade)
    if (local._tag === "None") {
      yield* say(local.reason)
      return yield* new ExitWith({ code: NOT_DELIVERED })
    }
    const d = yield* local.notifier.send(n, key)
    if (!d.ok) {
      yield* say(`notification not delivered via ${d.channel}: ${d.reason ?? "no reason given"}`)
      return yield* new ExitWith({ code: NOT_DELIVERED })
    }
    if (fade && d.id !== undefined) {
      const popups = openPopupsFile(env)
      if (popups._tag === "Unusable") yield* say(`popup ${d.id} shown but not remembered for fade: ${popups.reason}`)
      else yield* popups.file.remember(key, d.id, yield* Clock.currentTimeMillis).pipe(Effect.catchAll((e) => say(`popup ${d.id} shown but not remembered for fade: ${e.reason}`)))
    }
  })

const close = (key: string, env: NodeJS.ProcessEnv, platform: string) =>
  Effect.gen(function* () {
    if (key === "") return yield* say("close payload without a valid key; nothing closed")
    if (platform === "darwin") return yield* say(`${FADE_UNSUPPORTED_MAC}; nothing closed`)
    const popups = openPopupsFile(env)
    if (popups._tag === "Unusable") return yield* say(`nothing closed: ${popups.reason}`)
    const ids = yield* popups.file.take(key)
    if (ids.length === 0) return
    const d = yield* makeDesktopNotifier({ platform, env, fade: true }).close(key, ids)
    if (!d.ok) {
      yield* say(`popup not closed: ${d.reason ?? "no reason given"}`)
      return yield* new ExitWith({ code: NOT_DELIVERED })
    }
  })

/** What the receiver does with a decoded payload. */
export const handleReceived = (r: Received, env: NodeJS.ProcessEnv, platform: string): Effect.Effect<void, ExitWith> => {
  switch (r._tag) {
    case "Empty":
      return say("no payload (SSH_ORIGINAL_COMMAND is unset or blank); nothing shown")
    case "Unrecognised":
      return Effect.zipRight(
        say(`payload not understood (${r.bytes} bytes); shown as text`),
        show({ kind: "custom", title: r.title, message: r.message, urgency: "normal", icon: "utilities-terminal", sound: "none" }, "", env, platform)
      )
    case "Show":
      return show({ kind: "custom", title: r.title, message: r.message, urgency: r.urgency, icon: r.icon, sound: r.sound }, r.key, env, platform)
    case "Close":
      return close(r.key, env, platform)
    case "Probe":
      // the answer `ocpool doctor --probe` looks for: this host runs `ocpool receive` as the forced command
      return Console.error(PROBE_ANSWER)
  }
}

/** The whole receiver, on this process's environment. */
export const receive = (env: NodeJS.ProcessEnv = process.env, platform: string = process.platform): Effect.Effect<void, ExitWith> =>
  Effect.suspend(() => handleReceived(decodePayload(env.SSH_ORIGINAL_COMMAND), receiverEnv(env, platform, process.getuid?.()), platform))

/** The receiver's run as an exit code (0 shown or nothing to do, 75 not shown or not closed). */
export const receiveExitCode = (env: NodeJS.ProcessEnv = process.env, platform: string = process.platform): Effect.Effect<number> =>
  receive(env, platform).pipe(
    Effect.as(0),
    Effect.catchTag("ExitWith", (e) => Effect.succeed(e.code))
  )

/** Only for `ocpool receive --help`: any other invocation runs `receive` directly (app.ts), arguments ignored. */
export const receiveCommand = Command.make("receive", {}, () => receive()).pipe(
  Command.withDescription(
    "The forced command of the hop key on the desktop (authorized_keys command=\"ocpool receive\"). Reads the payload only from $SSH_ORIGINAL_COMMAND (arguments are ignored): one word, ocpool-notify-b64/1.<base64url of the payload>, as the sender writes it (a malformed one is shown as text), or the plain eight-line payload. Never runs any of it, and shows it with notify-send or osascript; a close payload closes the popups raised under its key (gdbus); a probe payload (from ocpool doctor --probe) shows nothing and answers 'ocpool receive: probe answered; nothing shown' on stderr. Prints nothing on stdout. Exit 0 when shown, or when the payload is empty, or for a probe; 75 when no local notifier can show it (stderr names the missing channel)."
  )
)
