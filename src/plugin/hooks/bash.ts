/**
 * Heavy-work permits for `bash` (issue 21): a heavy command waits in `tool.execute.before` for its
 * permit and is never rewritten; a session aborted while it waited is refused by throwing
 * `PermitWaitEnded` (US-51: opencode would still start it); `tool.execute.after` releases the permit and
 * appends how long it waited. The bus part ends a session's waits on its abort or error (bus.ts). With
 * `heavyCommands: false` nothing waits, but a call's end still releases (nothing, then).
 */
import { assign, field, text } from "../../core/extract.js"
import type { Settings } from "../../core/options.js"
import { heavyOf } from "../../core/permits/heavy.js"
import { PermitWaitEnded, type PermitGateService } from "../../services/permits/PermitGate.js"
import type { Parts, Runner } from "./runner.js"

/** Commands longer than this are judged on their first COMMAND_MAX characters (issue 21). */
export const COMMAND_MAX = 100_000

/** A `bash` call as `tool.execute.before`/`after` read it (issue 21); `undefined` for another tool or unreadable ids. */
export interface BashCall {
  readonly session: string
  readonly call: string
  /** `args.command` (from the output in `before`, the input in `after`), its first COMMAND_MAX characters. */
  readonly command: string
}

export const bashCall = (input: unknown, args: unknown): BashCall | undefined => {
  if (field(input, "tool") !== "bash") return undefined
  const session = text(field(input, "sessionID"))
  const call = text(field(input, "callID"))
  const raw = field(args, "command")
  if (session === undefined || call === undefined || typeof raw !== "string") return undefined
  return { session, call, command: raw.length > COMMAND_MAX ? raw.slice(0, COMMAND_MAX) : raw }
}

/** The ids of a finished `bash` call (`tool.execute.after`). */
export const bashEnd = (input: unknown): { readonly session: string; readonly call: string } | undefined => {
  if (field(input, "tool") !== "bash") return undefined
  const session = text(field(input, "sessionID"))
  const call = text(field(input, "callID"))
  return session === undefined || call === undefined ? undefined : { session, call }
}

/** A permit's reason: the command's first line, at most 200 characters. */
const reasonOf = (command: string): string => {
  const first = command.trim().split("\n", 1)[0] ?? ""
  return first.length > 200 ? `${first.slice(0, 199)}…` : first
}

/** Appends `line` to a tool's output text (guarded: a hostile output is left as it is). */
const appendOutput = (output: unknown, line: string): void => {
  const was = field(output, "output")
  if (typeof was !== "string") return
  assign(output, "output", was.endsWith("\n") || was === "" ? `${was}${line}` : `${was}\n${line}`)
}

export const bashHooks = (r: Runner, permitGate: PermitGateService, heavy: Settings["heavy"]): Parts => {
  const after: Parts["tool.execute.after"] = (input, output) => {
    const bash = bashEnd(input)
    if (bash === undefined) return false
    return r.run(permitGate.after(bash.session, bash.call), "heavy-work permit").then((line) => {
      if (line !== undefined) appendOutput(output, line)
      return true
    })
  }
  if (heavy === false) return { tools: ["bash"], "tool.execute.after": after }
  /** A bash call's wait for its permit, when its command is heavy. */
  const gated = async (bash: BashCall): Promise<true> => {
    const h = heavyOf(bash.command, heavy)
    if (h === undefined) return true
    const gate = await r.run(permitGate.before({ session: bash.session, call: bash.call, command: reasonOf(bash.command), budget: h.budget, weight: h.weight }), "heavy-work permit")
    // the session was aborted while it waited: refused here, or opencode would still start it (US-51)
    if (gate === "ended") throw new PermitWaitEnded(bash.session)
    return true
  }
  return {
    tools: ["bash"],
    "tool.execute.before": (input, output) => {
      if (r.disposed()) return true
      const bash = bashCall(input, field(output, "args"))
      return bash === undefined ? false : gated(bash)
    },
    "tool.execute.after": after
  }
}
