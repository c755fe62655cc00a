/**
 * The prompt of an automatic refresh run (US-20): the project root, the kind of run, the changed
 * paths (at most PROMPT_PATHS_MAX, the rest summed up as `…and K more`), and, when the map is over
 * its budget, a request to condense it. Pure.
 */
import type { ContextDecision } from "./refresh.js"
import { MANAGER_FILE, MAP_DIR, MAP_FILES } from "./map.js"

type Start = Extract<ContextDecision, { type: "context_start" }>

const kib = (bytes: number): string => `${Math.round((bytes / 1024) * 10) / 10} KiB`

/** The `…and K more` line, exactly. */
export const moreLine = (more: number): string => `…and ${more} more`

export const refreshPrompt = (root: string, start: Start, map: { readonly bytes: number; readonly maxBytes: number }): string => {
  const files = MAP_FILES.map((f) => `${MAP_DIR}/${f}`).join(", ")
  const lines: Array<string> = []
  if (start.kind === "bootstrap") {
    lines.push(`Create the context map of the project at ${root}: the directory ${MAP_DIR}/ does not exist yet.`)
    lines.push(`Write the five files ${files}, each short: a "Start here" list per subsystem (a few entry points with one line each), never an inventory of files, and decisions with their why.`)
  } else {
    lines.push(`Update the context map of the project at ${root} (${MAP_DIR}/: ${MAP_FILES.join(", ")}).`)
    lines.push(`Change only what the edits below made stale or missing; keep it short: "Start here" lists per subsystem, no inventories of files, decisions with their why.`)
  }
  lines.push(`Start by listing ${MAP_DIR}/; read ${MAP_DIR}/${MANAGER_FILE} first when it exists. It is the user's: never write it. Write nothing outside ${MAP_DIR}/.`)
  if (start.paths.length > 0) {
    lines.push("", "Files changed since the last refresh:")
    for (const p of start.paths) lines.push(`- ${p}`)
    if (start.more > 0) lines.push(moreLine(start.more))
  } else {
    lines.push("", "No file is listed: a refresh was asked for. Check the map against the code and fix what is stale.")
  }
  if (start.condense) {
    lines.push("", `The map is ${kib(map.bytes)}, over its ${kib(map.maxBytes)} budget: condense it (merge, shorten, drop what an agent can find in a minute).`)
  }
  lines.push("", "Answer with one line per map file you changed and why.")
  return lines.join("\n")
}
