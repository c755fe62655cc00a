/**
 * Which bash commands are heavy (issue 21): builds, test suites, compilers, bundlers, container builds,
 * package installs. A command is split into the commands of its chain (`&&`, `||`, `;`, `|`, `&`,
 * newlines, subshell parentheses and backticks, outside quotes; comments and heredoc bodies skipped),
 * each stripped of what only wraps it (`A=b`, `sudo`, `time`, `nice`, `env`, `exec`, `command`, `nohup`,
 * `timeout`, `if`/`then`/`do`/…), then matched against the user's patterns (first match wins) and the
 * built-in ones; a shell's `-c` script is judged like a command of its own. The chain counts as its
 * heaviest element. Rules are compiled once (`compileHeavyRules`); a light command costs one scan and two
 * regex passes per element (the hook's budget is 0.05 ms p99, `npm run bench:heavy`). Pure, total.
 */
import { HEAVY } from "./types.js"

/** A user pattern as the options give it, already validated (core/permits/settings.ts). */
export interface HeavyPatternInput {
  readonly regex: string
  readonly weight?: number | undefined
  readonly budget?: string | undefined
}

export interface HeavyRulesInput {
  readonly patterns?: ReadonlyArray<HeavyPatternInput> | undefined
  readonly ignore?: ReadonlyArray<string> | undefined
}

export interface HeavyPattern {
  readonly regex: RegExp
  readonly weight: number
  readonly budget: string
}

/** Compiled rules: user patterns (tried first, in order) and the ignore list (tried on the whole command). */
export interface HeavyRules {
  readonly patterns: ReadonlyArray<HeavyPattern>
  readonly ignore: ReadonlyArray<RegExp>
}

export interface HeavyMatch {
  readonly budget: string
  readonly weight: number
  /** The chain element that matched, stripped of its wrappers. */
  readonly matched: string
}

/** Longer commands are judged on their first this many characters. */
export const HEAVY_SCAN_MAX = 100_000

/** A regex source compiled, or the reason it is not a valid JS regex. */
export const compileRegex = (source: string): RegExp | { readonly error: string } => {
  try {
    return new RegExp(source)
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) }
  }
}

/** The rules, compiled once. Total: an entry whose regex does not compile is skipped (settings reported it). */
export const compileHeavyRules = (user: HeavyRulesInput = {}): HeavyRules => {
  const patterns: Array<HeavyPattern> = []
  for (const p of user.patterns ?? []) {
    const regex = compileRegex(p.regex)
    if (regex instanceof RegExp) patterns.push({ regex, weight: p.weight ?? 1, budget: p.budget ?? HEAVY })
  }
  const ignore: Array<RegExp> = []
  for (const source of user.ignore ?? []) {
    const regex = compileRegex(source)
    if (regex instanceof RegExp) ignore.push(regex)
  }
  return { patterns, ignore }
}

/** The built-in rules alone. */
export const DEFAULT_HEAVY_RULES: HeavyRules = { patterns: [], ignore: [] }

// --- wrappers stripped from the front of a chain element ---------------------------------------

const OPT = String.raw`--?[\w-]+(?:=\S*)?`
const ASSIGN = String.raw`[A-Za-z_]\w*=(?:'[^']*'|"(?:[^"\\]|\\.)*"|\\.|[^\s'"\\])*`
const WRAPPERS = [
  ASSIGN,
  String.raw`sudo(?:\s+(?:-[ugCDprtUT]\s*[^\s-]\S*|${OPT}))*`,
  String.raw`nice(?:\s+(?:-n\s*-?\d+|-\d+|${OPT}))*`,
  String.raw`env(?:\s+(?:-[uCS]\s*[^\s-]\S*|${OPT}))*`,
  String.raw`time(?:\s+-\w+)*`,
  String.raw`exec(?:\s+(?:-a\s*\S+|-\w+))*`,
  // `command -v make` asks where make is: not a wrapper.
  String.raw`command(?!\s+-[vV])(?:\s+-p)?`,
  "nohup",
  String.raw`timeout(?:\s+(?:-[ks]\s*[^\s-]\S*|${OPT}))*\s+\d+(?:\.\d+)?[smhd]?`,
  // `xargs -P4 -n1 make`: the command xargs runs
  String.raw`xargs(?:\s+(?:-[nPILsdaEe]\s*[^\s-]\S*|-[\w]+|--[\w-]+(?:=\S*)?))*`,
  "if|then|else|elif|do|while|until|!|\\{"
]
const WRAPPED = new RegExp(String.raw`^(?:(?:${WRAPPERS.join("|")})(?:\s+|$))+`)

// --- the built-in heavy commands, anchored at the element's start ----------------------------

const PM_OPTS = String.raw`(?:\s+(?:(?:--prefix|--filter|--workspace|--dir|--cwd|-C|-F|-w)\s+[^\s-]\S*|-\S+))*`
const JS_TOOLS = String.raw`(?:vitest|jest|tsc|mocha|ava|webpack|esbuild|rollup|vite\s+build|next\s+build|playwright\s+test|cypress\s+run|turbo\s+(?:run\s+)?(?:build|test)\S*|nx\s+(?:build|test|run-many|affected))`
const PY_RUN = String.raw`(?:(?:uv|poetry|pipenv|pdm|hatch|rye)\s+run\s+)?`
const BUILTINS = [
  // npm test, pnpm run build, yarn test:unit, npm run-script build, npm t
  String.raw`(?:npm|pnpm|yarn|bun)${PM_OPTS}\s+(?:run(?:-script)?(?:\s+-\S+)*\s+)?(?:test|build)(?:[:-]\S*)?`,
  String.raw`(?:npm|pnpm)${PM_OPTS}\s+t`,
  // installs (bare `yarn` installs too)
  String.raw`(?:npm|pnpm|bun)${PM_OPTS}\s+(?:ci|install|i|add)`,
  String.raw`yarn${PM_OPTS}\s+(?:install|add)`,
  String.raw`yarn(?=\s*$)`,
  // npx vitest, pnpm exec tsc, yarn jest, bunx tsc, node_modules/.bin/jest, tsc -b
  String.raw`(?:(?:npx|bunx|(?:npm|pnpm|yarn)\s+(?:exec|dlx)|bun\s+x|pnpm|yarn|bun)(?:\s+-\S+)*\s+(?:[\w.~-]*\/)*)?${JS_TOOLS}`,
  String.raw`cargo(?:\s+\+\S+)?(?:\s+-\S+)*\s+(?:build|b|test|t|check|c|clippy|bench|nextest|install|run\s+(?:.*\s)?--release)`,
  String.raw`go\s+(?:build|test|vet|install)`,
  "g?make",
  String.raw`cmake\s+--build`,
  "ninja",
  String.raw`meson\s+(?:compile|test)`,
  `${PY_RUN}(?:pytest|py\\.test|tox|nox)`,
  String.raw`${PY_RUN}python(?:\d+(?:\.\d+)?)?(?:\s+-\w+)*\s+-m\s+(?:pytest|unittest|tox|nox)`,
  "mvnw?",
  "gradlew?",
  "sbt",
  String.raw`bazel(?:isk)?(?:\s+-\S+)*\s+(?:build|test)`,
  String.raw`docker\s+(?:build|image\s+build|buildx\s+(?:build|bake)|compose(?:\s+-\S+(?:\s+[^\s-]\S*)?)*\s+build)`,
  String.raw`docker-compose(?:\s+-\S+(?:\s+[^\s-]\S*)?)*\s+build`,
  // `docker compose up --build`: builds the images before it starts them
  String.raw`docker(?:\s+compose|-compose)(?:\s+-\S+(?:\s+[^\s-]\S*)?)*\s+up(?=(?:\s+\S+)*?\s+--build(?:=\S*)?(?:\s|$))`,
  String.raw`podman\s+(?:build|image\s+build)`,
  String.raw`buildah\s+(?:bud|build)`,
  String.raw`dotnet\s+(?:build|test|publish)`,
  String.raw`swift\s+(?:build|test)`,
  String.raw`mix\s+(?:test|compile)`,
  String.raw`zig\s+(?:build|test)`,
  "rustc",
  "gcc",
  String.raw`g\+\+`,
  String.raw`clang(?:\+\+)?`
]
/** Any path before the tool (`./gradlew`, `/usr/bin/make`, `node_modules/.bin/jest`); a word boundary after. */
const BUILTIN = new RegExp(String.raw`^(?:[\w.~-]*\/)*(?:${BUILTINS.join("|")})(?=$|[\s<>])`)

// --- splitting a command into its chain --------------------------------------------------------

const SPACE = (c: number) => c === 32 || c === 9 || c === 13
const SEPARATOR = (c: number) => c === 59 /* ; */ || c === 124 /* | */ || c === 40 /* ( */ || c === 41 /* ) */ || c === 96 /* ` */
const WORD_END = (c: number) => Number.isNaN(c) || SPACE(c) || c === 10 || SEPARATOR(c) || c === 38 || c === 60 || c === 62

/** The heredoc word after `<<` or `<<-` at `i` (quotes removed), and where it ends. */
const heredocWord = (s: string, i: number): { readonly word: string; readonly end: number } | undefined => {
  let j = i
  while (j < s.length && SPACE(s.charCodeAt(j))) j++
  let word = ""
  while (j < s.length && !WORD_END(s.charCodeAt(j))) {
    const c = s[j]!
    if (c === "'" || c === '"') {
      const close = s.indexOf(c, j + 1)
      if (close < 0) return undefined
      word += s.slice(j + 1, close)
      j = close + 1
    } else if (c === "\\") {
      word += s[j + 1] ?? ""
      j += 2
    } else {
      word += c
      j++
    }
  }
  return word === "" ? undefined : { word, end: j }
}

/** Where the body of a heredoc that starts after the newline at `from` ends: the newline after its delimiter line (or the end). */
const heredocEnd = (s: string, from: number, word: string, tabs: boolean): number => {
  if (!tabs) {
    // one search for the delimiter line: a newline, the word, then a newline or the end
    for (;;) {
      const k = s.indexOf(`\n${word}`, from)
      if (k < 0) return s.length
      const end = k + 1 + word.length
      if (end >= s.length || s.charCodeAt(end) === 10) return end
      from = k + 1
    }
  }
  let at = from + 1
  while (at < s.length) {
    let nl = s.indexOf("\n", at)
    if (nl < 0) nl = s.length
    if (s.slice(at, nl).replace(/^\t+/, "") === word) return nl
    at = nl + 1
  }
  return s.length
}

/** Where the bodies of the `pending` heredocs (one after the other) end, starting after the newline at `i`. */
const skipHeredocs = (s: string, i: number, pending: ReadonlyArray<{ readonly word: string; readonly tabs: boolean }>): number => {
  let at = i
  for (const { word, tabs } of pending) at = heredocEnd(s, at, word, tabs)
  return at
}

/**
 * The elements of a command's chain, in order, trimmed (empty ones left out). Separators count only
 * outside quotes and escapes; `&` of a redirection (`2>&1`, `&>`) is no separator; comments and heredoc
 * bodies are no commands.
 */
export const chainOf = (s: string): Array<string> => {
  const out: Array<string> = []
  // command substitutions inside double quotes, judged as chains of their own at the end
  const inner: Array<string> = []
  let start = 0
  let pending: Array<{ word: string; tabs: boolean }> | undefined
  const cut = (end: number, next: number) => {
    const el = s.slice(start, end).trim()
    if (el !== "") out.push(el)
    start = next
  }
  const n = s.length
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c === 92 /* \ */) {
      i++
    } else if (c === 39 /* ' */) {
      const close = s.indexOf("'", i + 1)
      i = close < 0 ? n : close
    } else if (c === 34 /* " */) {
      let j = i + 1
      while (j < n) {
        const d = s.charCodeAt(j)
        if (d === 92) j += 2
        else if (d === 34) break
        else if (d === 36 /* $ */ && s.charCodeAt(j + 1) === 40 /* ( */) {
          // "…$(make)…": a command substitution runs inside double quotes too
          const close = closingParen(s, j + 2)
          inner.push(s.slice(j + 2, close))
          j = close + 1
        } else if (d === 96 /* ` */) {
          const close = s.indexOf("`", j + 1)
          inner.push(s.slice(j + 1, close < 0 ? n : close))
          j = close < 0 ? n : close + 1
        } else j++
      }
      i = j
    } else if (c === 10 /* \n */) {
      cut(i, i + 1)
      if (pending !== undefined) {
        i = skipHeredocs(s, i, pending)
        pending = undefined
        start = i + 1
      }
    } else if (SEPARATOR(c)) {
      cut(i, i + 1)
    } else if (c === 38 /* & */) {
      const prev = i > 0 ? s.charCodeAt(i - 1) : 0
      if (prev !== 62 && prev !== 60 && s.charCodeAt(i + 1) !== 62) cut(i, i + 1)
    } else if (c === 35 /* # */) {
      const prev = i > 0 ? s.charCodeAt(i - 1) : 10
      if (i === start || SPACE(prev) || prev === 10) {
        cut(i, i)
        const nl = s.indexOf("\n", i)
        i = (nl < 0 ? n : nl) - 1
        start = i + 1
      }
    } else if (c === 60 /* < */ && s.charCodeAt(i + 1) === 60 && s.charCodeAt(i + 2) !== 60) {
      const tabs = s.charCodeAt(i + 2) === 45 /* - */
      const w = heredocWord(s, i + (tabs ? 3 : 2))
      if (w !== undefined) {
        ;(pending ??= []).push({ word: w.word, tabs })
        i = w.end - 1
      } else i++
    } else if (c === 60 && s.charCodeAt(i + 1) === 60) {
      i += 2 // a here-string `<<<`
    }
  }
  cut(n, n)
  for (const text of inner) out.push(...chainOf(text))
  return out
}

/** The index of the `)` that closes a `$(` whose text starts at `from` (quotes inside skipped); the end when none. */
const closingParen = (s: string, from: number): number => {
  let depth = 1
  for (let k = from; k < s.length; k++) {
    const c = s.charCodeAt(k)
    if (c === 92) k++
    else if (c === 39) {
      const close = s.indexOf("'", k + 1)
      if (close < 0) return s.length
      k = close
    } else if (c === 40) depth++
    else if (c === 41 && --depth === 0) return k
  }
  return s.length
}

/** The element without its wrappers (`FOO=1 sudo -E nice -n 5 make` → `make`). */
export const unwrap = (element: string): string => {
  const m = WRAPPED.exec(element)
  return m === null ? element : element.slice(m[0].length)
}

/** `sh -c '…'`, `bash -lc "…"`: the script a shell is asked to run, unquoted. */
const SHELL_C = /^(?:[\w.~-]*\/)*(?:ba|z|da|k)?sh(?:\s+-[a-zA-Z]+)*?\s+-[a-zA-Z]*c[a-zA-Z]*\s+(?:'([^']*)'|"((?:[^"\\]|\\.)*)")/

const scriptOf = (bare: string): string | undefined => {
  const m = SHELL_C.exec(bare)
  if (m === null) return undefined
  return m[1] ?? m[2]!.replace(/\\([\\"$`])/g, "$1")
}

/** `find . -name '*.mk' -exec make -f {} \;`: the command find runs for what it finds. */
const FIND_EXEC = /^(?:[\w.~-]*\/)*find\s.*?\s-(?:exec|execdir|ok|okdir)\s+(.+?)(?:\s+(?:\\;|';'|";"|\+)(?:\s|$)|$)/

const findExecOf = (bare: string): string | undefined => FIND_EXEC.exec(bare)?.[1]

/** `ocpool run` anywhere in a command (`npx ocpool run`, `./bin/ocpool.js run`, inside `sh -c`). */
const RUNNER = /\bocpool(?:\.js)?\s+run\b/

/** The heaviest element of a chain, looking into `sh -c` scripts `depth` levels deep. */
const heaviest = (text: string, rules: HeavyRules, depth: number): HeavyMatch | undefined => {
  let best: HeavyMatch | undefined
  for (const element of chainOf(text)) {
    const bare = unwrap(element)
    if (bare === "") continue
    let found: HeavyMatch | undefined
    for (const p of rules.patterns) {
      if (p.regex.test(bare)) {
        found = { budget: p.budget, weight: p.weight, matched: bare }
        break
      }
    }
    if (found === undefined && BUILTIN.test(bare)) found = { budget: HEAVY, weight: 1, matched: bare }
    if (found === undefined && depth > 0) {
      const script = scriptOf(bare) ?? findExecOf(bare)
      if (script !== undefined) found = heaviest(script, rules, depth - 1)
    }
    if (found !== undefined && (best === undefined || found.weight > best.weight)) best = found
  }
  return best
}

/**
 * The heaviest element of the command's chain (ties: the first), or undefined for a light command or one
 * an `ignore` regex matches (tested on the whole command, not anchored: add `^`/`$` for that).
 */
export const heavyOf = (command: string, rules: HeavyRules): HeavyMatch | undefined => {
  const text = command.length > HEAVY_SCAN_MAX ? command.slice(0, HEAVY_SCAN_MAX) : command
  // a command that goes through `ocpool run` takes its own permit: gating it here too would hold two
  // (and deadlock on a budget of 1), so the whole command is left to the runner
  if (RUNNER.test(text)) return undefined
  const best = heaviest(text, rules, 2)
  if (best === undefined) return undefined
  for (const r of rules.ignore) if (r.test(text)) return undefined
  return best
}
