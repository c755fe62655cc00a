// Bundles the CLI, the plugin, the development entries and the benchmarks with esbuild: a bundled CLI starts ~4x faster than one
// that loads hundreds of ESM files from node_modules (docs/PERFORMANCE.md).
import * as esbuild from "esbuild"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { writeTimelineScript } from "./timelineScript.mjs"

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))

// The timeline page's script (src/web/timeline.ts) bundled into the module the page embeds, before
// anything is fingerprinted or bundled: a build always carries the script of its sources (DECISIONS 239).
if (await writeTimelineScript()) console.log("src/core/view/timelineScript.ts rewritten from src/web/timeline.ts")

/** A hash of everything the build reads (sources, presets, the manifest and lockfile, this script). */
const fingerprint = () => {
  const hash = createHash("sha256")
  const visit = (path) => {
    for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = join(path, entry.name)
      if (entry.isDirectory()) visit(full)
      else if (entry.isFile()) hash.update(`${full}\0`).update(readFileSync(full)).update("\0")
    }
  }
  for (const dir of ["src", "bench", "presets"]) if (existsSync(dir)) visit(dir)
  for (const file of ["package.json", "package-lock.json", "scripts/build.mjs", "scripts/timelineScript.mjs"]) if (existsSync(file)) hash.update(`${file}\0`).update(readFileSync(file)).update("\0")
  return hash.digest("hex")
}
const STAMP = "dist/.sources-fingerprint"
const sources = fingerprint()
// `--if-changed` (the demo, the benchmarks): nothing to do when dist/ was built from these very sources
if (process.argv.includes("--if-changed") && existsSync("dist/ocpool.cjs") && existsSync(STAMP) && readFileSync(STAMP, "utf8") === sources) {
  console.log("dist/ is up to date with the sources: not rebuilt")
  process.exit(0)
}
rmSync(STAMP, { force: true })
// Overwrite in place (no rm): a build while tests read dist/ never leaves it missing.
mkdirSync("dist", { recursive: true })

// Bundled CommonJS dependencies call require() at run time; ESM output needs a real one.
const requireShim = {
  js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);"
}

const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
  banner: requireShim,
  define: { OCPOOL_VERSION: JSON.stringify(pkg.version) },
  // ESM builds first: a UMD `main` (jsonc-parser) keeps run-time require() calls of files that are not bundled.
  mainFields: ["module", "main"],
  // Native addon: stays a runtime import from node_modules.
  external: ["better-sqlite3"]
}

/**
 * @effect/cli can read option values from YAML, TOML and INI files; ocpool never asks it to, and those
 * parsers were 15% of the CLI bundle, parsed at every start. They are replaced by a module that refuses.
 */
const noConfigFileParsers = {
  name: "no-config-file-parsers",
  setup(build) {
    build.onResolve({ filter: /^(yaml|toml|ini)$/ }, (a) => ({ path: a.path, namespace: "no-config-file-parsers" }))
    build.onLoad({ filter: /.*/, namespace: "no-config-file-parsers" }, (a) => ({
      loader: "js",
      contents: `const refuse = () => { throw new Error("ocpool reads no ${a.path} files") }; export const parse = refuse; export const stringify = refuse; export default { parse: refuse, stringify: refuse }`
    }))
  }
}

// effect/Schema re-exports fast-check for its Arbitrary module; nothing at run time builds arbitraries, so
// the runtime bundles (CLI, status, plugin) get an empty module instead (45 KB less to compile at start).
const noFastCheck = {
  name: "no-fast-check",
  setup(build) {
    build.onResolve({ filter: /^fast-check$/ }, (a) => ({ path: a.path, namespace: "no-fast-check" }))
    build.onLoad({ filter: /.*/, namespace: "no-fast-check" }, () => ({ loader: "js", contents: "export {}" }))
  }
}

/** The boot entry's `import("./engine.js")` stays an import, of the engine bundle beside it. */
const engineApart = {
  name: "engine-apart",
  setup(build) {
    build.onResolve({ filter: /^\.\/engine\.js$/ }, (a) =>
      a.importer.endsWith(join("src", "plugin", "entry.ts")) ? { path: "./opencode-plugin-engine.js", external: true } : undefined
    )
  }
}

/** Fails the build when the boot entry bundles Effect (a start would parse it again) or anything of the engine. */
const bootOnly = (result) => {
  const inputs = Object.keys(result.metafile.inputs)
  const heavy = inputs.filter((i) => i.includes("node_modules/effect/") || i.includes("node_modules/@effect/") || /src\/(layers|services)\/(?!fs\/|pool\/PoolSourceFiles)/.test(i))
  if (heavy.length > 0) throw new Error(`dist/opencode-plugin.js must not bundle ${heavy.slice(0, 5).join(", ")}`)
}

await Promise.all([
  esbuild.build({ ...common, entryPoints: ["src/cli/main.ts"], outfile: "dist/cli.js", plugins: [noConfigFileParsers, noFastCheck] }),
  // The fast `status` bundle, CommonJS so that it can be loaded with a V8 code cache (made below); import.meta.url from its own path.
  esbuild.build({
    ...common,
    entryPoints: ["src/cli/statusMain.ts"],
    outfile: "dist/status-main.cjs",
    format: "cjs",
    banner: { js: "const __ocpool_url = require('node:url').pathToFileURL(__filename).href;" },
    define: { ...common.define, "import.meta.url": "__ocpool_url" },
    plugins: [noFastCheck]
  }),
  // The fast `receive` bundle (the hop's forced command), CommonJS like the status bundle.
  esbuild.build({
    ...common,
    entryPoints: ["src/cli/receiveMain.ts"],
    outfile: "dist/receive-main.cjs",
    format: "cjs",
    banner: { js: "const __ocpool_url = require('node:url').pathToFileURL(__filename).href;" },
    define: { ...common.define, "import.meta.url": "__ocpool_url" },
    plugins: [noFastCheck]
  }),
  esbuild.build({ ...common, entryPoints: ["src/cli/cacheGen.ts"], outfile: "dist/cache-gen.js" }),
  esbuild.build({ ...common, entryPoints: ["src/cli/helpGen.ts"], outfile: "dist/help-gen.js", plugins: [noConfigFileParsers] }),
  // The plugin runs inside opencode's Bun as two files: the boot entry users list (`default` its only
  // export, no Effect: what opencode imports and awaits at every start) and the engine beside it, which
  // the entry loads when first needed (src/plugin/boot.ts). Each is self-contained; a check below keeps
  // Effect out of the entry.
  esbuild.build({ ...common, entryPoints: ["src/plugin/entry.ts"], outfile: "dist/opencode-plugin.js", external: [], plugins: [engineApart], metafile: true }).then(bootOnly),
  esbuild.build({ ...common, entryPoints: ["src/plugin/engine.ts"], outfile: "dist/opencode-plugin-engine.js", external: [], plugins: [noFastCheck] }),
  // Development entries, not shipped (package.json `files` does not list them): the fleet driver for the
  // tests, benchmarks and the demo (src/dev/fleetDrive.ts; issue 34 moved it out of `ocpool`).
  esbuild.build({ ...common, entryPoints: ["src/dev/fleetDriveMain.ts"], outfile: "dist/dev-fleet-drive.js", plugins: [noFastCheck] }),
  esbuild.build({ ...common, entryPoints: ["bench/replay.ts"], outfile: "dist/bench-replay.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/route.ts"], outfile: "dist/bench-route.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/decode.ts"], outfile: "dist/bench-decode.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/sweep.ts"], outfile: "dist/bench-sweep.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/cost.ts"], outfile: "dist/bench-cost.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/held.ts"], outfile: "dist/bench-held.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/coldstart.ts"], outfile: "dist/bench-coldstart.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/opencodeStart.ts"], outfile: "dist/bench-opencode-start.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/notify.ts"], outfile: "dist/bench-notify.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/quotaFetch.ts"], outfile: "dist/bench-quota.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/init.ts"], outfile: "dist/bench-init.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/classify.ts"], outfile: "dist/bench-classify.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/heavy.ts"], outfile: "dist/bench-heavy.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/permits.ts"], outfile: "dist/bench-permits.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/counters.ts"], outfile: "dist/bench-counters.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/fleet.ts"], outfile: "dist/bench-fleet.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/scrape.ts"], outfile: "dist/bench-scrape.js" }),
  // playwright-core stays a runtime import from node_modules (a devDependency; it drives /usr/bin/chromium).
  esbuild.build({ ...common, entryPoints: ["bench/timeline.ts"], outfile: "dist/bench-timeline.js", external: [...common.external, "playwright-core"] })
])

// The help of every command, rendered by the real command tree (src/cli/helpGen.ts) for the fast path.
execFileSync(process.execPath, ["dist/help-gen.js", "dist/help.json"], { stdio: "inherit" })
rmSync("dist/help-gen.js", { force: true }) // force: a build running at the same time may have removed it

// The V8 code cache of the fast `status` bundle (src/cli/codeCache.ts, loaded by src/cli/entry.ts): compiled
// and its top level evaluated here, so the cache holds what every start compiles.
for (const old of readdirSync("dist").filter((f) => f.startsWith("status-main.cjs.") && f.endsWith(".cache"))) rmSync(join("dist", old), { force: true })
const statusCache = execFileSync(process.execPath, ["dist/cache-gen.js", join(process.cwd(), "dist/status-main.cjs")], { encoding: "utf8" }).trim()
rmSync("dist/cache-gen.js", { force: true })

// bin/ocpool.js's entry: answers --help/--version from dist/help.json and runs a well-formed `status`
// from dist/status-main.cjs with the cache just made (its name given here, so a start hashes nothing);
// everything else loads dist/cli.js (docs/PERFORMANCE.md, "Cold start").
await esbuild.build({
  ...common,
  entryPoints: ["src/cli/entry.ts"],
  outfile: "dist/ocpool.cjs",
  format: "cjs",
  banner: { js: "const __ocpool_url = require('node:url').pathToFileURL(__filename).href;" },
  define: { ...common.define, "import.meta.url": "__ocpool_url", OCPOOL_STATUS_CACHE: JSON.stringify(statusCache) }
})

writeFileSync(STAMP, sources)
