/**
 * The map's commands (US-22, SPEC §13): `/context-init`, `/context-update` and `/context-review`, each
 * run by the `context` agent as a subtask, and `expandTemplate`, opencode 1.18.33's expansion of a
 * command template (`SessionPrompt.command`) without its shell step. Pure.
 */
import { MANAGER_FILE, MAP_DIR, MAP_FILES } from "./map.js"

export interface MapCommand {
  readonly template: string
  readonly description: string
  readonly agent: "context"
  readonly subtask: true
}

const FILES = MAP_FILES.join(", ")
const MANAGER = `Read ${MAP_DIR}/${MANAGER_FILE} first when it exists; never write it.`

/** The three commands, by name, in the order they are injected. */
export const MAP_COMMANDS: Readonly<Record<"context-init" | "context-update" | "context-review", MapCommand>> = {
  "context-init": {
    template: [
      `Build the project map in ${MAP_DIR}/ from scratch: ${FILES}.`,
      `Run \`ls ${MAP_DIR}/\` first. ${MANAGER}`,
      "Explore the codebase, then write each file: a short \"Start here\" list per subsystem in architecture.md, no file inventories, every decision with its why.",
      "Keep the map small. Report which files you wrote."
    ].join("\n"),
    description: "build the project map in .opencode/context/ from scratch",
    agent: "context",
    subtask: true
  },
  "context-update": {
    template: [
      `Refresh the project map in ${MAP_DIR}/ against the current code.`,
      "Focus: $ARGUMENTS",
      `Run \`ls ${MAP_DIR}/\` first. ${MANAGER}`,
      "Read what changed in the focus above (the whole project when it is empty) and update only the entries it affects: fix stale paths and descriptions, add what is new, remove what is gone.",
      "Keep the map small. Report which files you changed."
    ].join("\n"),
    description: "refresh the project map, optionally focused on a path or topic",
    agent: "context",
    subtask: true
  },
  "context-review": {
    template: [
      `Review the project map in ${MAP_DIR}/ against the code.`,
      `Run \`ls ${MAP_DIR}/\` first. ${MANAGER}`,
      "Check every path and claim in the map against the code; fix or remove stale entries, replace any file inventory by a short \"Start here\" list, make sure each decision states its why.",
      "Condense: merge repeats and cut what an agent would not need. Report what you fixed and removed."
    ].join("\n"),
    description: "check the project map against the code, fix stale entries and condense it",
    agent: "context",
    subtask: true
  }
}

/** opencode's argument split: `[Image n]`, a double- or single-quoted run, or a run without spaces and quotes. */
const ARGS = /(?:\[Image\s+\d+\]|"[^"]*"|'[^']*'|[^\s"']+)/gi
const QUOTES = /^["']|["']$/g
const POSITIONAL = /\$(\d+)/g

/**
 * A command template with `args` (the text after the command name) as opencode 1.18.33 expands it:
 * `$1`…`$n` take the positional arguments (quotes trimmed; the highest placeholder takes the rest; a
 * missing one is empty), `$ARGUMENTS` the whole argument string; a template with neither gets the
 * arguments appended after a blank line; the result is trimmed. Like opencode, `$ARGUMENTS` is replaced
 * with a string replacement (`$&` or `$$` in the arguments are replacement patterns). opencode's `` !`cmd` `` shell
 * substitution is not performed.
 */
export const expandTemplate = (template: string, args: string): string => {
  const positional = (args.match(ARGS) ?? []).map((a) => a.replace(QUOTES, ""))
  const placeholders = template.match(POSITIONAL) ?? []
  let last = 0
  for (const p of placeholders) last = Math.max(last, Number(p.slice(1)))
  const withPositional = template.replaceAll(POSITIONAL, (_match, index: string) => {
    const position = Number(index)
    const i = position - 1
    if (i >= positional.length) return ""
    if (position === last) return positional.slice(i).join(" ")
    return positional[i]!
  })
  const usesArguments = template.includes("$ARGUMENTS")
  // a string replacement, as opencode's: `$&`, `$$` … in the arguments are replacement patterns there too
  let text = withPositional.replaceAll("$ARGUMENTS", args)
  if (placeholders.length === 0 && !usesArguments && args.trim() !== "") text = `${text}\n\n${args}`
  return text.trim()
}
