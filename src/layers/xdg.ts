/** XDG base directories: the variable when set and non-empty, else its default under the home directory. */
import { homedir } from "node:os"
import { join } from "node:path"

const DEFAULTS = {
  XDG_CONFIG_HOME: [".config"],
  XDG_STATE_HOME: [".local", "state"],
  XDG_DATA_HOME: [".local", "share"]
} as const

export const xdgDir = (name: keyof typeof DEFAULTS, env: NodeJS.ProcessEnv = process.env): string => {
  const value = env[name]
  return value !== undefined && value !== "" ? value : join(homedir(), ...DEFAULTS[name])
}
