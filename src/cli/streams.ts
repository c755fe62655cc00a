/**
 * The output rules shared by the full CLI (output.ts) and the start-up entry (entry.ts), which must not
 * load Effect: when colour is on, and how a failed write reads. node:util only.
 */
import { stripVTControlCharacters } from "node:util"

/** Colour only on a terminal, and never with NO_COLOR set to anything but the empty string (no-color.org). */
export const colourWanted = (isTTY: boolean | undefined, env: Readonly<Record<string, string | undefined>>): boolean => isTTY === true && (env.NO_COLOR ?? "") === ""

/** The reason of a failed write as a person reads it: `no space left on device`, not an errno dump. */
export const writeReason = (error: unknown): string => {
  const e = error as { code?: unknown; message?: unknown } | null
  const message = typeof e?.message === "string" ? e.message : String(error)
  const m = /^[A-Z0-9_]+: ([^,]+)/.exec(message)
  return stripVTControlCharacters(m !== null ? m[1]! : typeof e?.code === "string" ? e.code : message).split("\n")[0]!
}
