/**
 * The notifier this process uses (SPEC §10.5): the channel is selected once, from the environment,
 * the platform, what is on PATH and the hop host, and the matching notifier is built. `selectNotifier`
 * is the same decision without building anything, for `ocpool doctor`.
 */
import { Effect, Layer } from "effect"
import { hostname } from "node:os"
import { join } from "node:path"
import { hopHost, hopWanted, isRemote, selectChannel, type NotifyVia, type Selected } from "../../core/notify/channel.js"
import { shortHostname } from "../../core/notify/content.js"
import { Notifier, type NotifierService } from "../../services/notify/Notifier.js"
import { makeDesktopNotifier } from "./NotifierDesktop.js"
import { makeNoneNotifier } from "./NotifierNone.js"
import { makeSshNotifier } from "./NotifierSsh.js"
import { which, type Env } from "../process/tools.js"
import { readTextFile } from "../fs/safeRead.js"

export interface NotifierSelectOptions {
  readonly via: NotifyVia
  readonly notifyHost: string | undefined
  readonly fade: boolean
  readonly env: Env
  readonly platform: string
  /** The home directory whose `.ssh/config` may name `ocpool-desktop`; `undefined`: none. */
  readonly home: string | undefined
  /** This machine's host name (default `os.hostname()`); its first label marks hop messages. */
  readonly hostname?: string | undefined
}

/** Largest `~/.ssh/config` read. */
export const SSH_CONFIG_MAX_BYTES = 1 << 20

/** The text of `<home>/.ssh/config` when it is a readable regular file under the cap; else `undefined`. */
export const readSshConfig = (home: string | undefined): string | undefined => {
  if (home === undefined) return undefined
  try {
    const read = readTextFile(join(home, ".ssh", "config"), SSH_CONFIG_MAX_BYTES)
    return read._tag === "Text" ? read.text : undefined
  } catch {
    return undefined
  }
}

/** The channel that would run. `~/.ssh/config` is read only when a hop is wanted and no host is given. */
export const selectNotifier = (o: NotifierSelectOptions): Selected => {
  const remote = isRemote(o.env)
  const host = hopWanted(o.via, remote) ? hopHost(o.env.OCPOOL_NOTIFY_HOST, o.notifyHost, undefined) ?? hopHost(undefined, undefined, readSshConfig(o.home)) : undefined
  return selectChannel({ via: o.via, remote, platform: o.platform, host, onPath: (name) => which(name, o.env) !== undefined })
}

/** The notifier of the selected channel. */
export const makeNotifier = (o: NotifierSelectOptions): NotifierService => {
  const selected = selectNotifier(o)
  switch (selected.channel) {
    case "notify-send":
    case "osascript":
      return makeDesktopNotifier({ platform: o.platform, env: o.env, fade: o.fade })
    case "ssh":
      return makeSshNotifier({ host: selected.host, shortHost: shortHostname(o.hostname ?? hostname()), env: o.env })
    case "none":
      return makeNoneNotifier(selected.reason)
  }
}

/**
 * The notifier of the selected channel, selected when first used (its first send or close, or the
 * first read of its channel) and kept for the process: building it reads nothing, so opencode's start
 * waits for no PATH search and no `~/.ssh/config`. The selection is synchronous (the channel is a
 * plain field of the service), hence a memo rather than `Effect.cached`.
 */
export const lazyNotifier = (o: NotifierSelectOptions): NotifierService => {
  let chosen: NotifierService | undefined
  const selected = (): NotifierService => (chosen ??= makeNotifier(o))
  return {
    get channel() {
      return selected().channel
    },
    get reason() {
      return selected().reason
    },
    send: (n, key) => Effect.suspend(() => selected().send(n, key)),
    close: (key, ids) => Effect.suspend(() => selected().close(key, ids))
  }
}

export const NotifierSelect = (o: NotifierSelectOptions) => Layer.sync(Notifier, () => lazyNotifier(o))
