/**
 * Installs the pinned real opencode (npm `opencode-ai`) into a cache directory outside the repo's
 * node_modules, once, and finds its native binary.
 *
 * The npm install is the only network access of the e2e harness (the npm registry). Everything else
 * runs on 127.0.0.1.
 */
import { spawn, spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The exact opencode version the harness runs. Hook payloads and the DB schema move between releases. */
export const OPENCODE_VERSION = "1.18.33"

/** The repository root (two levels above this file). */
export const repoRoot: string = fileURLToPath(new URL("../../", import.meta.url))

/** `<repo>/.e2e-cache`; git-ignored. */
export const e2eCacheRoot: string = join(repoRoot, ".e2e-cache")

export const INSTALL_TIMEOUT_MS = 180_000

export interface EnsureOpencodeOptions {
  /** Defaults to {@link OPENCODE_VERSION}. */
  readonly version?: string
  /** Defaults to `<repo>/.e2e-cache/opencode-<version>`. */
  readonly installDir?: string
  /** Bound on `npm install`; defaults to 180 s. */
  readonly timeoutMs?: number
}

const MARKER = ".installed.json"

/** Platform packages that carry the binary, best first (baseline = no AVX2). */
const candidatePackages = (): ReadonlyArray<string> => {
  const os = process.platform === "win32" ? "windows" : process.platform
  const base = `opencode-${os}-${process.arch}`
  return [base, `${base}-baseline`, `${base}-musl`, `${base}-baseline-musl`]
}

const binaryOf = (installDir: string, pkg: string): string =>
  join(installDir, "node_modules", pkg, "bin", process.platform === "win32" ? "opencode.exe" : "opencode")

/** Runs `<binary> --version` (bounded); returns the trimmed output, or undefined if it does not run. */
const versionOf = (binary: string): string | undefined => {
  const r = spawnSync(binary, ["--version"], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_MODELS_FETCH: "1" }
  })
  if (r.status !== 0 || typeof r.stdout !== "string") return undefined
  return r.stdout.trim().split("\n").pop()?.trim()
}

/** The first candidate binary in `installDir` that runs and reports `version`. */
const findWorkingBinary = (installDir: string, version: string): string | undefined => {
  for (const pkg of candidatePackages()) {
    const bin = binaryOf(installDir, pkg)
    if (!existsSync(bin)) continue
    // `npm install --ignore-scripts` keeps the tarball's mode; make sure it is executable.
    if ((statSync(bin).mode & 0o111) === 0) chmodSync(bin, 0o755)
    if (versionOf(bin) === version) return bin
  }
  return undefined
}

const runNpmInstall = (dir: string, version: string, timeoutMs: number): Promise<void> =>
  new Promise((resolve, reject) => {
    // --ignore-scripts: opencode-ai's postinstall only hard-links the platform binary to bin/, which
    // the harness does not use (it runs node_modules/opencode-<platform>/bin/opencode directly).
    const child = spawn(
      "npm",
      ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--save-exact", "--loglevel=error", `opencode-ai@${version}`],
      { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_update_notifier: "false" } }
    )
    let output = ""
    child.stdout.on("data", (d: Buffer) => (output += d.toString()))
    child.stderr.on("data", (d: Buffer) => (output += d.toString()))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`npm install opencode-ai@${version} timed out after ${timeoutMs} ms\n${output.slice(-4000)}`))
    }, timeoutMs)
    child.on("error", (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else reject(new Error(`npm install opencode-ai@${version} failed (code ${code}, signal ${signal})\n${output.slice(-4000)}`))
    })
  })

/**
 * Installs `opencode-ai@<version>` (exact pin) into `<repo>/.e2e-cache/opencode-<version>/` unless it
 * is already there, and returns the absolute path of the native binary
 * (`node_modules/opencode-linux-x64/bin/opencode`, falling back to the baseline/musl packages).
 *
 * The install goes to a sibling temporary directory that is renamed into place on success, so an
 * interrupted install never leaves a half-filled cache behind.
 */
export const ensureOpencode = async (options: EnsureOpencodeOptions = {}): Promise<string> => {
  const version = options.version ?? OPENCODE_VERSION
  const installDir = options.installDir ?? join(e2eCacheRoot, `opencode-${version}`)
  const timeoutMs = options.timeoutMs ?? INSTALL_TIMEOUT_MS

  const marker = join(installDir, MARKER)
  if (existsSync(marker)) {
    try {
      const recorded = JSON.parse(readFileSync(marker, "utf8")) as { version?: unknown; binary?: unknown }
      if (recorded.version === version && typeof recorded.binary === "string" && existsSync(recorded.binary)) return recorded.binary
    } catch {
      // fall through: re-validate below
    }
  }
  if (existsSync(installDir)) {
    const bin = findWorkingBinary(installDir, version)
    if (bin !== undefined) {
      writeFileSync(marker, JSON.stringify({ version, binary: bin, at: new Date().toISOString() }, null, 2) + "\n")
      return bin
    }
    rmSync(installDir, { recursive: true, force: true })
  }

  const staging = `${installDir}.tmp-${process.pid}-${Date.now()}`
  mkdirSync(staging, { recursive: true })
  try {
    writeFileSync(
      join(staging, "package.json"),
      JSON.stringify({ name: "ocpool-e2e-opencode", version: "0.0.0", private: true, description: `opencode-ai@${version} for the e2e harness` }, null, 2) + "\n"
    )
    await runNpmInstall(staging, version, timeoutMs)
    if (findWorkingBinary(staging, version) === undefined) {
      throw new Error(`opencode-ai@${version} installed, but no runnable binary among ${candidatePackages().join(", ")} in ${staging}/node_modules`)
    }
    try {
      renameSync(staging, installDir)
    } catch (e) {
      // Another process finished first: use its install.
      if (!existsSync(installDir)) throw e
      rmSync(staging, { recursive: true, force: true })
    }
  } catch (e) {
    rmSync(staging, { recursive: true, force: true })
    throw e
  }
  const bin = findWorkingBinary(installDir, version)
  if (bin === undefined) throw new Error(`no runnable opencode ${version} binary in ${installDir}`)
  writeFileSync(marker, JSON.stringify({ version, binary: bin, at: new Date().toISOString() }, null, 2) + "\n")
  return bin
}
