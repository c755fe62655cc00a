/**
 * Build step (scripts/build.mjs): renders every `--help` and `-h` page (help/render.ts, unwrapped and
 * styled: entry.ts wraps it to the terminal and strips the styling where colour is off) and the
 * `--version` output with the real command tree, into dist/help.json for the start-up fast path.
 * Only a `--version` that exits 0 with nothing on stderr is kept; anything else stays with the full CLI.
 */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { helpPage, runCli } from "./app.js"
import { HELP_COMMANDS, helpKey } from "./fastRoute.js"
import { captureStream, type CliIo } from "./output.js"

const table: Record<string, { stdout: string }> = {}
for (const path of HELP_COMMANDS) {
  const page = helpPage(path)
  if (page === undefined) throw new Error(`no command ${path.join(" ")} in the tree (fastRoute.ts HELP_COMMANDS)`)
  for (const flag of ["--help", "-h"]) table[helpKey([...path, flag])] = { stdout: page }
}
const stdout = captureStream(true)
const stderr = captureStream(true)
const io: CliIo = { stdout, stderr, stdinIsTTY: false, env: {} }
if ((await Effect.runPromise(runCli(["node", "ocpool", "--version"], io))) === 0 && stderr.text === "") table[helpKey(["--version"])] = { stdout: stdout.text }
writeFileSync(process.argv[2] ?? "dist/help.json", JSON.stringify(table))
