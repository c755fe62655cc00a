/**
 * `ocpool notify [TITLE [MESSAGE]] [--kind K] [--title T] [--message M] [--urgency U] [--icon I]
 * [--sound S] [--via auto|local|ssh] [--host H] [--json]` (SPEC §12.2, §10.4, §10.5): sends one
 * notification through the channel the plugin would use and reports the delivery. Every field is
 * validated as `ocpool receive` validates it: texts cleaned and capped in code points, urgency, icon and
 * sound whitelisted (anything else is the default, with a note on stderr).
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Data, Effect, Option } from "effect"
import { hostname } from "node:os"
import type { NotifyVia } from "../core/notify/channel.js"
import { notificationFor, shortHostname, type Notification, type NotifyKind } from "../core/notify/content.js"
import { MESSAGE_MAX, TITLE_MAX } from "../core/notify/limits.js"
import { ICONS, iconOf, SOUNDS, soundOf, soundsOn, URGENCIES, urgencyOf, type Icon, type Sound, type Urgency } from "../core/notify/sound.js"
import { capCodePoints, cleanText } from "../core/notify/text.js"
import { printable, printableJson } from "../core/printable.js"
import { makeNotifier } from "../layers/notify/NotifierSelect.js"
import { homeDir } from "../layers/fs/xdg.js"
import type { Delivery } from "../services/notify/Notifier.js"
import { UsageProblem } from "./errors.js"
import { diagnostic } from "./output.js"
import { text } from "./shared/textFlag.js"

export type NotifyCliKind = NotifyKind | "test"

/** The session title the kinds' texts are built for: the title reads `opencode — ocpool notify`. */
export const NOTIFY_SESSION_TITLE = "ocpool notify"

/** Exit code of a notification that was not delivered (SPEC §12.1: temporary failure). */
export const NOT_DELIVERED = 75

/** Ends a command with `code`, its reason already printed (app.ts turns it into the exit code). */
export class ExitWith extends Data.TaggedError("ExitWith")<{ readonly code: number }> {}

/** A test notification (`--kind test`, `doctor --probe`): normal, utilities-terminal, no sound. */
export const testNotification = (title: string, shortHost: string): Notification => ({
  kind: "test",
  title: cleanText(title, TITLE_MAX),
  message: cleanText(`Test notification from ${shortHost === "" ? "this machine" : shortHost}`, MESSAGE_MAX),
  urgency: "normal",
  icon: "utilities-terminal",
  sound: "none"
})

export interface NotifyFields {
  readonly kind: NotifyCliKind | undefined
  /** TITLE or --title (not both). */
  readonly title: string | undefined
  /** MESSAGE or --message (not both). */
  readonly message: string | undefined
  readonly urgency: string | undefined
  readonly icon: string | undefined
  readonly sound: string | undefined
}

export type Composed = { readonly _tag: "Notification"; readonly notification: Notification; readonly notes: ReadonlyArray<string> } | { readonly _tag: "NoTitle" }

/** A flag checked against its whitelist: the value, or the fallback and a note naming what was refused. */
const whitelisted = <T extends string>(flag: string, raw: string | undefined, of: (v: unknown) => T, allowed: ReadonlyArray<T>, fallback: T, notes: Array<string>): T => {
  if (raw === undefined) return fallback
  const v = of(raw)
  if (v === raw.trim().toLowerCase()) return v
  notes.push(`--${flag} "${capCodePoints(printable(raw), 40)}" is not one of ${allowed.join(", ")}; ${fallback} is used`)
  return fallback
}

/**
 * The notification the flags describe: the kind's title, message, urgency, icon and sound (SPEC §10.2;
 * title `opencode — ocpool notify`), each replaced by an explicit value. A title or message that is empty
 * once cleaned counts as not given. `sounds` false (OCPOOL_SOUND silencing) makes the sound `none`.
 */
export const composeNotification = (f: NotifyFields, sounds: boolean, shortHost: string): Composed => {
  const base: Notification | undefined =
    f.kind === undefined ? undefined : f.kind === "test" ? testNotification(`opencode — ${NOTIFY_SESSION_TITLE}`, shortHost) : notificationFor(f.kind, { sessionTitle: NOTIFY_SESSION_TITLE }, true)
  const title = cleanText(f.title ?? "", TITLE_MAX)
  if (title === "" && base === undefined) return { _tag: "NoTitle" }
  const message = cleanText(f.message ?? "", MESSAGE_MAX)
  const notes: Array<string> = []
  const urgency = whitelisted<Urgency>("urgency", f.urgency, urgencyOf, URGENCIES, base?.urgency ?? "normal", notes)
  const icon = whitelisted<Icon>("icon", f.icon, iconOf, ICONS, base?.icon ?? "utilities-terminal", notes)
  const sound = whitelisted<Sound>("sound", f.sound, soundOf, SOUNDS, base?.sound ?? "none", notes)
  return {
    _tag: "Notification",
    notification: {
      kind: base?.kind ?? "custom",
      title: title !== "" ? title : base!.title,
      message: message !== "" || base === undefined ? message : base.message,
      urgency,
      icon,
      sound: sounds ? sound : "none"
    },
    notes
  }
}

/** The `--json` object (SPEC §12.3): exactly ok, channel, reason and id, absent ones null. */
export const deliveryJson = (d: Delivery): string => printableJson(JSON.stringify({ ok: d.ok, channel: d.channel, reason: d.reason ?? null, id: d.id ?? null }))

/** The stderr line of a notification that was not delivered (US-14.3), without the `ocpool: ` prefix. */
export const notDelivered = (d: Delivery): string => `notification not delivered via ${d.channel}: ${printable(d.reason ?? "no reason given")}`

const once = (name: string, positional: Option.Option<string>, flag: Option.Option<string>): Effect.Effect<string | undefined, UsageProblem> =>
  Option.isSome(positional) && Option.isSome(flag)
    ? Effect.fail(new UsageProblem({ message: `notify: give the ${name} once, as ${name.toUpperCase()} or as --${name}`, option: `--${name}` }))
    : Effect.succeed(Option.getOrUndefined(Option.orElse(flag, () => positional)))


export const notifyCommand = Command.make(
  "notify",
  {
    titleArg: Args.text({ name: "TITLE" }).pipe(Args.withDescription("The title (or use --title)"), Args.optional),
    messageArg: Args.text({ name: "MESSAGE" }).pipe(Args.withDescription("The message (or use --message)"), Args.optional),
    kind: Options.choice("kind", ["done", "question", "permission", "error", "test"]).pipe(
      Options.withDescription(
        "Fill title, message, urgency, icon and sound as the plugin does for that kind (title 'opencode — ocpool notify'); test: 'Test notification from <host>', normal, utilities-terminal, no sound. Explicit values win."
      ),
      Options.optional
    ),
    title: text("title", "T", `The title (cleaned, at most ${TITLE_MAX} characters)`),
    message: text("message", "M", `The message (cleaned, at most ${MESSAGE_MAX} characters)`),
    urgency: text("urgency", "U", `${URGENCIES.join(" | ")} (default normal, or the kind's); anything else is the default`),
    icon: text("icon", "I", `${ICONS.join(" | ")} (default utilities-terminal, or the kind's); anything else is the default`),
    sound: text("sound", "S", `${SOUNDS.join(" | ")} (default none, or the kind's); anything else is the default; OCPOOL_SOUND=0 silences every sound`),
    via: Options.choice("via", ["auto", "local", "ssh"]).pipe(
      Options.withDescription("auto: the ssh hop in an SSH session with a hop host, else the desktop notifier (as the plugin); local: notify-send or osascript here; ssh: the hop"),
      Options.withDefault("auto" as const)
    ),
    host: text("host", "H", "The hop host or alias (instead of $OCPOOL_NOTIFY_HOST, then 'ocpool-desktop' from ~/.ssh/config); used with --via ssh, or auto in an SSH session"),
    json: Options.boolean("json").pipe(Options.withDescription('{"ok","channel","reason","id"} on stdout (reason and id null when absent)'))
  },
  (a) =>
    Effect.gen(function* () {
      // @effect/cli takes a flag it does not know (or one missing its value) as a positional argument
      for (const word of [a.titleArg, a.messageArg]) {
        if (Option.isSome(word) && word.value.startsWith("-")) {
          return yield* new UsageProblem({
            message: `notify: unknown flag or missing value: ${capCodePoints(printable(word.value), 40)} (a text that starts with - goes in --title or --message)`,
            option: word.value
          })
        }
      }
      const title = yield* once("title", a.titleArg, a.title)
      const message = yield* once("message", a.messageArg, a.message)
      const env: NodeJS.ProcessEnv = { ...process.env }
      const host = Option.getOrUndefined(a.host)?.trim()
      if (host !== undefined && host !== "") env.OCPOOL_NOTIFY_HOST = host
      const shortHost = shortHostname(hostname())
      const composed = composeNotification(
        {
          kind: Option.getOrUndefined(a.kind),
          title,
          message,
          urgency: Option.getOrUndefined(a.urgency),
          icon: Option.getOrUndefined(a.icon),
          sound: Option.getOrUndefined(a.sound)
        },
        soundsOn(true, env.OCPOOL_SOUND),
        shortHost
      )
      if (composed._tag === "NoTitle") return yield* new UsageProblem({ message: "notify needs a title (or --kind)" })
      for (const note of composed.notes) yield* diagnostic(note)
      const notifier = makeNotifier({ via: a.via as NotifyVia, notifyHost: undefined, fade: false, env, platform: process.platform, home: homeDir(env), hostname: hostname() })
      const d = yield* notifier.send(composed.notification, "")
      if (a.json) yield* Console.log(deliveryJson(d))
      else if (d.ok) yield* Console.log(`notification delivered via ${d.channel}${d.id === undefined ? "" : ` (popup id ${d.id})`}`)
      if (!d.ok) {
        yield* diagnostic(notDelivered(d))
        return yield* new ExitWith({ code: NOT_DELIVERED })
      }
    })
).pipe(
  Command.withDescription(
    "Send one notification through the channel the plugin would use and report the delivery. Needs a title: TITLE, --title, or --kind. Exit 0 delivered; 75 not delivered ('ocpool: notification not delivered via <channel>: <reason>' on stderr); 2 without a title."
  )
)
