/**
 * `ocpool run`'s command words belong to the command (issue 33): `ocpool run echo --version` runs
 * `echo --version`, `--` or not. @effect/cli takes `--version`, `--help`, `--wizard` and its other
 * built-in flags wherever it finds them, `--` included; so before it parses, the command word gets a
 * `--` in front of it, and every word after that starts with `-` is hidden behind a NUL (which no real
 * argument can hold). `run` takes the words back with `commandWords`.
 */

/** run's own flags that take a value (`--budget NAME`), and the CLI's built-in ones. */
const WITH_VALUE = new Set(["--budget", "--weight", "--wait", "--timeout", "--reason", "--state-dir", "--log-level", "--completions"])

const HIDDEN = "\u0000"

/** `args` (after `ocpool`) with a `run`'s command words kept from the CLI's parser; anything else as it is. */
export const protectRunArgs = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (args[0] !== "run") return args
  let i = 1
  for (; i < args.length; i++) {
    const a = args[i]!
    if (a === "--") break
    if (!a.startsWith("-") || a === "-") break
    // `--budget heavy`: the value is run's too (`--budget=heavy` is one word)
    if (WITH_VALUE.has(a)) i++
  }
  if (i >= args.length) return args
  const start = args[i] === "--" ? i + 1 : i
  const words = args.slice(start).map((w) => (w.startsWith("-") ? `${HIDDEN}${w}` : w))
  return [...args.slice(0, i), "--", ...words]
}

/** The command words as they were given. */
export const commandWords = (argv: ReadonlyArray<string>): ReadonlyArray<string> => argv.map((w) => (w.startsWith(HIDDEN) ? w.slice(HIDDEN.length) : w))
