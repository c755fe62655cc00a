/**
 * The argv of `ocpool` put in the shape @effect/cli parses as meant, before it parses (issue 33).
 *
 * `ocpool run`'s command words belong to the command: `ocpool run echo --version` runs
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

/** `replay`'s options that take a value (a `-` after one of them is that value). */
const REPLAY_VALUES = new Set(["--pool", "--expect", "--timeline", "--log-level", "--completions"])

/**
 * `replay - --expect F`: @effect/cli reads no option after a lone `-` (standard input); the `-` is
 * moved after them, where it means the same.
 */
export const stdinMarkerLast = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (args[0] !== "replay") return args
  const at = args.findIndex((a, i) => a === "-" && i > 0 && !REPLAY_VALUES.has(args[i - 1]!))
  if (at < 0 || at === args.length - 1 || args.slice(at + 1).includes("--")) return args
  return [...args.slice(0, at), ...args.slice(at + 1), "-"]
}

/** Every reshaping above, in order. */
export const preParse = (args: ReadonlyArray<string>): ReadonlyArray<string> => stdinMarkerLast(protectRunArgs(args))
