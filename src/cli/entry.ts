/**
 * `ocpool`'s process entry (bin/ocpool.js). Most invocations load the full command tree (dist/cli.js).
 * Two kinds are answered without it, to start fast (docs/PERFORMANCE.md, "Cold start"): `--help`/`-h`
 * of every command and `--version`, printed from dist/help.json (rendered at build time by the same
 * command tree), and a well-formed `status`, run by dist/status-main.js. fastRoute.ts decides.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import Module, { createRequire } from "node:module"
import { dirname } from "node:path"
import { fileURLToPath } from "node:url"
import { stripVTControlCharacters } from "node:util"
import { Script } from "node:vm"
import { fastRoute } from "./fastRoute.js"

interface Rendered {
  readonly stdout: string
}

/** The pre-rendered output for `key`, or undefined when dist/help.json lacks it. */
const rendered = (key: string): Rendered | undefined => {
  try {
    const table = JSON.parse(readFileSync(new URL("./help.json", import.meta.url), "utf8")) as Record<string, Rendered>
    return Object.hasOwn(table, key) ? table[key] : undefined
  } catch {
    return undefined
  }
}

/** Writes the text as output.ts would: styled only on a terminal without NO_COLOR; a closed pipe is quiet, other failures one line. */
const print = (text: string): void => {
  const colour = process.stdout.isTTY === true && (process.env.NO_COLOR ?? "") === ""
  let reported = false
  const failed = (error: Error & { code?: string }) => {
    if (reported) return
    reported = true
    if (error.code === "EPIPE") return
    process.exitCode = 1
    const reason = /^[A-Z0-9_]+: ([^,]+)/.exec(error.message)?.[1] ?? error.code ?? error.message
    process.stderr.write(`ocpool: cannot write output: ${stripVTControlCharacters(reason)}\n`)
  }
  process.stdout.on("error", failed)
  process.stdout.write(colour ? text : stripVTControlCharacters(text), (error) => {
    if (error) failed(error)
  })
}

const args = process.argv.slice(2)
const route = fastRoute(args)
const help = route?._tag === "Help" ? rendered(route.key) : undefined
/** A sibling bundle in dist/ (a runtime import: the bundler leaves it alone). */
const sibling = (name: string): Promise<unknown> => import(new URL(name, import.meta.url).href)

/**
 * A CommonJS sibling bundle loaded with the V8 code cache written next to it at build time: most of a
 * cold start is compiling the bundle, and the cache skips that. The cache's name carries the hash of
 * the source it was made from, so a stale cache is never offered; one V8 refuses (another Node) is ignored.
 */
const cached = (name: string): unknown => {
  const file = fileURLToPath(new URL(name, import.meta.url))
  const source = readFileSync(file, "utf8")
  let cachedData: Buffer | undefined
  try {
    cachedData = readFileSync(`${file}.${createHash("sha256").update(source).digest("hex").slice(0, 16)}.cache`)
  } catch {
    cachedData = undefined
  }
  const script = new Script(Module.wrap(source), { filename: file, ...(cachedData === undefined ? {} : { cachedData }) })
  const module = { exports: {} as unknown }
  ;(script.runInThisContext() as (...a: ReadonlyArray<unknown>) => void)(module.exports, createRequire(file), module, file, dirname(file))
  return module.exports
}

if (help !== undefined) print(help.stdout)
else if (route?._tag === "Status") (cached("./status-main.cjs") as typeof import("./statusMain.js")).main(route.flags)
else await sibling("./cli.js")
