/**
 * Build step (scripts/build.mjs): renders the output of every `--help`, `-h` and `--version` with the
 * real command tree, styled as on a terminal, into dist/help.json for the start-up fast path (entry.ts).
 * Only outputs that exit 0 with nothing on stderr are kept; anything else stays with the full CLI.
 */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { runCli } from "./app.js"
import { helpKey, helpKeys } from "./fastRoute.js"
import { captureStream, type CliIo } from "./output.js"


const table: Record<string, { stdout: string }> = {}
for (const args of helpKeys()) {
  const stdout = captureStream(true)
  const stderr = captureStream(true)
  const io: CliIo = { stdout, stderr, stdinIsTTY: false, env: {} }
  const code = await Effect.runPromise(runCli(["node", "ocpool", ...args], io))
  if (code === 0 && stderr.text === "") table[helpKey(args)] = { stdout: stdout.text }
}
writeFileSync(process.argv[2] ?? "dist/help.json", JSON.stringify(table))
