/**
 * This installation of opencode-pool as the file system shows it: its root (the nearest directory above
 * this module with opencode-pool's package.json), its `bin/ocpool.js`, and the facts that decide how a
 * person runs `ocpool` from a directory (core/invocation.ts): which `ocpool` PATH finds, resolved to its
 * real path, whether the bin can run by its own path.
 */
import { accessSync, constants, existsSync, realpathSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { BARE, commandLine, invocationOf, type Invocation, type InvocationFacts } from "../../core/invocation.js"
import { which } from "../process/tools.js"
import { nearestPackage } from "./pluginEntry.js"

/** The root of this installation: the directory of the nearest named package.json above `from`, when it is opencode-pool's. */
export const installationRoot = (from: string = fileURLToPath(import.meta.url)): string | undefined => {
  const found = nearestPackage(from)
  return found?.name === "opencode-pool" ? found.dir : undefined
}

const real = (path: string): string | undefined => {
  try {
    return realpathSync(path)
  } catch {
    return undefined
  }
}

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** The nearest directory at or above `dir` holding a package.json (where npx looks first), or undefined. */
const nearestProject = (dir: string): string | undefined => {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, "package.json"))) return at
    if (dirname(at) === at) return undefined
  }
}

/**
 * The PATH of the person's shell: under `npx` or an npm script, npm puts its own `node_modules/.bin`
 * folders in front (`npx ocpool` links this package into `~/.npm/_npx/…/.bin`), which the shell the
 * hint is read in does not have.
 */
export const shellPath = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
  if (env["npm_command"] === undefined && env["npm_lifecycle_event"] === undefined) return env
  const entries = (env["PATH"] ?? "").split(":").filter((p) => !/(^|\/)node_modules\/\.bin\/?$/.test(p) && !p.includes("/_npx/") && !p.includes("/@npmcli/run-script/"))
  return { ...env, PATH: entries.join(":") }
}

/**
 * The facts of core/invocation.ts for `cwd` and the PATH of `env`; `undefined` when this installation's
 * root or bin cannot be found (then the hints say `ocpool`, as before).
 */
export const invocationFacts = (env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd(), root: string | undefined = installationRoot()): InvocationFacts | undefined => {
  if (root === undefined) return undefined
  const realRoot = real(root)
  const bin = real(join(root, "bin", "ocpool.js"))
  if (realRoot === undefined || bin === undefined) return undefined
  const found = which("ocpool", shellPath(env))
  const nodeOnPath = which("node", env) !== undefined
  const here = real(cwd) ?? cwd
  return {
    onPath: found === undefined ? undefined : (real(found) ?? found),
    root: realRoot,
    bin,
    cwd: here,
    project: nearestProject(here),
    binRunnable: nodeOnPath && executable(bin),
    nodeOnPath,
    node: process.execPath
  }
}

/** How `ocpool` runs from `cwd` with the PATH of `env`. */
export const invocationHere = (env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Invocation => {
  const facts = invocationFacts(env, cwd)
  return facts === undefined ? BARE : invocationOf(facts)
}

/** The command line of `ocpool <args>` as it runs from `cwd` (every hint that tells a person to run one). */
export const ocpoolLine = (args: string, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string => commandLine(invocationHere(env, cwd), args)
