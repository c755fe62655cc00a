/**
 * Heavy-work permits for `bash` (issue 21): a heavy command waits in `tool.execute.before` for its
 * permit and is never rewritten; a session aborted while it waited is refused by throwing
 * `PermitWaitEnded` (US-51: opencode would still start it); `tool.execute.after` releases the permit and
 * appends how long it waited. The bus part ends a session's waits on its abort or error (bus.ts). With
 * `heavyCommands: false` nothing waits, but a call's end still releases (nothing, then).
 */
import { assign, field } from "../../core/extract.js"
import type { Settings } from "../../core/options.js"
import { heavyOf } from "../../core/permits/heavy.js"
import { PermitWaitEnded, type PermitGateService } from "../../services/permits/PermitGate.js"
import { bashCall, bashEnd, type BashCall } from "../events.js"
import type { Parts } from "./merge.js"
import type { Runner } from "./runner.js"

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
  if (heavy === false) return { "tool.execute.after": after }
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
    // a bash call ends the call here: the task part after it never sees one
    "tool.execute.before": (input, output) => {
      if (r.disposed()) return true
      const bash = bashCall(input, field(output, "args"))
      return bash === undefined ? false : gated(bash)
    },
    "tool.execute.after": after
  }
}
