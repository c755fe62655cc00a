/**
 * `ocpool`'s process entry (bin/ocpool.js, CommonJS: no ES module loader to start for the fast paths). Most invocations load the full command tree (dist/cli.js).
 * Three kinds are answered without it, to start fast (docs/PERFORMANCE.md, "Cold start"): `--help`/`-h`
 * of every command and `--version`, printed from dist/help.json (rendered at build time by the same
 * command tree), a well-formed `status`, run by dist/status-main.cjs, and `receive` (the hop's forced
 * command, on the desktop for every notification), run by dist/receive-main.cjs. fastRoute.ts decides.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { stripVTControlCharacters } from "node:util"
import { loadCached } from "./codeCache.js"
import { fastRoute } from "./fastRoute.js"
import { helpWidth, wrapHelp } from "./help/wrap.js"
import { colourWanted, writeReason } from "./streams.js"
import type { StatusFlags } from "./statusRun.js"

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
  const colour = colourWanted(process.stdout.isTTY, process.env)
  let reported = false
  const failed = (error: Error & { code?: string }) => {
    if (reported) return
    reported = true
    if (error.code === "EPIPE") return
    process.exitCode = 1
    process.stderr.write(`ocpool: cannot write output: ${writeReason(error)}\n`)
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

/** The full command tree; a failure to load it is one line and exit 1. */
const fullCli = (): void => {
  sibling("./cli.js").catch((e: unknown) => {
    process.stderr.write(`ocpool: internal error: cannot load the CLI: ${stripVTControlCharacters(String(e instanceof Error ? e.message : e)).split("\n")[0]}\n`)
    process.exitCode = 1
  })
}

/** The code cache's file name, given by the build (scripts/build.mjs). */
declare const OCPOOL_STATUS_CACHE: string | undefined

/** Runs `status` from the fast bundle; false (nothing run) when that bundle cannot be loaded. */
const fastStatus = (flags: StatusFlags): boolean => {
  let statusMain: typeof import("./statusMain.js")
  try {
    const file = fileURLToPath(new URL("./status-main.cjs", import.meta.url))
    const cache = typeof OCPOOL_STATUS_CACHE === "string" ? fileURLToPath(new URL(`./${OCPOOL_STATUS_CACHE}`, import.meta.url)) : undefined
    statusMain = loadCached(file, cache) as typeof statusMain
  } catch {
    return false
  }
  statusMain.main(flags)
  return true
}

/** Runs the hop's forced command from its own bundle; false (nothing run) when it cannot be loaded. */
const fastReceive = (): boolean => {
  let receiveMain: typeof import("./receiveMain.js")
  try {
    receiveMain = loadCached(fileURLToPath(new URL("./receive-main.cjs", import.meta.url)), undefined) as typeof receiveMain
  } catch {
    return false
  }
  receiveMain.main()
  return true
}

if (help !== undefined) print(route?._tag === "Help" && route.key !== "--version" ? wrapHelp(help.stdout, helpWidth(process.stdout.columns, process.env)) : help.stdout)
else if (route?._tag === "Receive") {
  if (!fastReceive()) fullCli()
} else if (route?._tag !== "Status" || !fastStatus(route.flags)) fullCli()
