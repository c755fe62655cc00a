/**
 * Channels (SPEC §10.5, §10.8): which one runs, and the exact argv of each. The texts only ever travel
 * as argv entries after `--` (notify-send; ssh, inside the payload's hop token, one word a shell cannot
 * act on) or as `on run argv` data (osascript); nothing is a shell string. Pure: the shell supplies
 * the environment, the platform and what is on PATH.
 */
import type { Notification } from "./content.js"
import { encodeHopToken } from "./hopToken.js"
import { HOP_CONNECT_TIMEOUT_S } from "./limits.js"
import { notifySendBody } from "./markup.js"
import { LINUX_SOUND, MAC_SOUND } from "./sound.js"

export type ChannelName = "notify-send" | "osascript" | "ssh" | "none"
export type NotifyVia = "auto" | "local" | "ssh" | "none"

export const DESKTOP_ALIAS = "ocpool-desktop"

export const NO_HOST_REASON = "remote session without a notify host; run ocpool tunnel setup"

/** The desktop channel of a platform, if it has one. */
export const platformChannel = (platform: string): "notify-send" | "osascript" | undefined =>
  platform === "darwin" ? "osascript" : platform === "linux" || platform.endsWith("bsd") ? "notify-send" : undefined

/** Whether this process runs in an SSH session (SPEC §10.5). */
export const isRemote = (env: Readonly<Record<string, string | undefined>>): boolean =>
  ["SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"].some((k) => (env[k] ?? "") !== "")

/** Whether an ssh config text has a `Host` line naming the alias (patterns are not expanded). */
export const sshConfigHasHost = (config: string, alias: string = DESKTOP_ALIAS): boolean =>
  config.split(/\r?\n/).some((line) => {
    const m = /^\s*host(?:\s*=\s*|\s+)(.*)$/i.exec(line)
    return m !== null && m[1]!.trim().split(/\s+/).includes(alias)
  })

/** The hop host: `OCPOOL_NOTIFY_HOST`, then the option `notifyHost`, then `ocpool-desktop` when ~/.ssh/config names it. */
export const hopHost = (env: string | undefined, option: string | undefined, sshConfig: string | undefined): string | undefined => {
  for (const v of [env, option]) {
    const h = v?.trim() ?? ""
    if (h !== "") return h
  }
  return sshConfig !== undefined && sshConfigHasHost(sshConfig) ? DESKTOP_ALIAS : undefined
}

export type Selected =
  | { readonly channel: "notify-send" | "osascript" }
  | { readonly channel: "ssh"; readonly host: string }
  | { readonly channel: "none"; readonly reason: string }

export interface ChannelFacts {
  readonly via: NotifyVia
  readonly remote: boolean
  readonly platform: string
  readonly host: string | undefined
  /** Whether a binary is on PATH. */
  readonly onPath: (name: string) => boolean
}

const local = (f: ChannelFacts): Selected => {
  const c = platformChannel(f.platform)
  if (c === undefined) return { channel: "none", reason: `no notifier on ${f.platform}` }
  return f.onPath(c) ? { channel: c } : { channel: "none", reason: `no notifier on ${f.platform}: ${c} is not on PATH` }
}

/**
 * Whether the hop is the channel, given a host (SPEC §10.5): forced by `ssh`, or `auto` in a remote
 * session. Only then is a hop host needed (and `~/.ssh/config` worth reading).
 */
export const hopWanted = (via: NotifyVia, remote: boolean): boolean => via === "ssh" || (via === "auto" && remote)

/** The channel that runs (SPEC §10.5 "Selection under auto"); `local`, `ssh` and `none` force one. */
export const selectChannel = (f: ChannelFacts): Selected => {
  if (f.via === "none") return { channel: "none", reason: "notifications are sent nowhere (notifyVia none)" }
  if (!hopWanted(f.via, f.remote)) return local(f)
  if (f.host !== undefined) return { channel: "ssh", host: f.host }
  return { channel: "none", reason: f.via === "ssh" ? "no notify host; run ocpool tunnel setup or set OCPOOL_NOTIFY_HOST" : NO_HOST_REASON }
}

type Shown = Pick<Notification, "title" | "message" | "urgency" | "icon" | "sound">

/**
 * `notify-send` argv (without the program). notify-send reads C escapes in the body (`\n`, `\t`,
 * `\101`), not in the summary: the body's backslashes are doubled so the message arrives as written.
 * The daemon may render the body as markup: its `&`, `<`, `>` are escaped (markup.ts); the summary is
 * plain text and handed over as it is.
 */
export const notifySendArgs = (n: Shown, printId: boolean): ReadonlyArray<string> => {
  const hint = LINUX_SOUND[n.sound]
  return [
    "--app-name=opencode",
    `--urgency=${n.urgency}`,
    `--icon=${n.icon}`,
    ...(hint === undefined ? [] : [`--hint=string:sound-name:${hint}`]),
    ...(printId ? ["--print-id"] : []),
    "--",
    n.title,
    notifySendBody(n.message)
  ]
}

/** `osascript` argv: the script is fixed; title, message and sound name are `argv` items. */
export const osascriptArgs = (n: Shown): ReadonlyArray<string> => {
  const sound = MAC_SOUND[n.sound]
  const display =
    sound === undefined
      ? "display notification (item 2 of argv) with title (item 1 of argv)"
      : "display notification (item 2 of argv) with title (item 1 of argv) sound name (item 3 of argv)"
  return ["-e", "on run argv", "-e", display, "-e", "end run", n.title, n.message, ...(sound === undefined ? [] : [sound])]
}

/**
 * The ssh hop argv: the single remote argument is the payload's hop token (hopToken.ts), one word a
 * shell cannot act on, never the payload's lines: a host without the forced command hands the remote
 * command to a login shell.
 */
export const sshArgs = (host: string, payload: string): ReadonlyArray<string> => [
  "-T",
  "-o",
  "BatchMode=yes",
  "-o",
  `ConnectTimeout=${HOP_CONNECT_TIMEOUT_S}`,
  "-o",
  "ClearAllForwardings=yes",
  "--",
  host,
  encodeHopToken(payload)
]

/** `gdbus` argv closing a popup by id (SPEC §10.8). */
export const closeArgs = (id: number): ReadonlyArray<string> => [
  "call",
  "--session",
  "--dest",
  "org.freedesktop.Notifications",
  "--object-path",
  "/org/freedesktop/Notifications",
  "--method",
  "org.freedesktop.Notifications.CloseNotification",
  String(id)
]

/** The popup id `notify-send --print-id` printed, if any. */
export const printedId = (stdout: string): number | undefined => {
  const m = /^\s*(\d{1,10})\s*$/.exec(stdout)
  if (m === null) return undefined
  const id = Number(m[1])
  return id > 0 && id <= 0xffffffff ? id : undefined
}
