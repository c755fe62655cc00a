/**
 * The home and XDG base directories. `HOME` when it is an absolute path, else the system's entry for
 * this user; neither → no home (`undefined`, never a throw). An XDG variable counts when it is an
 * absolute path; a relative or empty one is ignored, as the XDG base directory rules say, and its
 * default under the home directory is used.
 */
import { homedir } from "node:os"
import { isAbsolute, join } from "node:path"

const DEFAULTS = {
  XDG_CONFIG_HOME: [".config"],
  XDG_STATE_HOME: [".local", "state"],
  XDG_DATA_HOME: [".local", "share"],
  XDG_CACHE_HOME: [".cache"]
} as const

export type XdgName = keyof typeof DEFAULTS

/** The user's home directory, or `undefined` when there is none (no usable `HOME`, no system entry). */
export const homeDir = (env: NodeJS.ProcessEnv = process.env, systemHome: () => string = homedir): string | undefined => {
  const fromEnv = env.HOME
  if (fromEnv !== undefined && fromEnv !== "" && isAbsolute(fromEnv)) return fromEnv
  try {
    const system = systemHome()
    return typeof system === "string" && system !== "" && isAbsolute(system) ? system : undefined
  } catch {
    return undefined
  }
}

/** The XDG directory, or `undefined` when the variable is unusable and there is no home to default under. */
export const xdgDir = (name: XdgName, env: NodeJS.ProcessEnv = process.env, systemHome: () => string = homedir): string | undefined => {
  const value = env[name]
  if (value !== undefined && value !== "" && isAbsolute(value)) return value
  const home = homeDir(env, systemHome)
  return home === undefined ? undefined : join(home, ...DEFAULTS[name])
}

/** The one-line reason when there is no home directory to put `name`'s default under. */
export const noHomeReason = (name: XdgName): string => `no home directory (HOME is unset or not absolute, and the system has none for this user); set HOME or ${name}`

/** `~` and `~/…` expanded against the home directory; `undefined` when the path needs a home there is not. */
export const expandHome = (path: string, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  if (path !== "~" && !path.startsWith("~/")) return path
  const home = homeDir(env)
  return home === undefined ? undefined : path === "~" ? home : join(home, path.slice(2))
}
