// Bundles the CLI, the plugin and the benchmarks with esbuild: a bundled CLI starts ~4x faster than one
// that loads hundreds of ESM files from node_modules (docs/PERFORMANCE.md).
import * as esbuild from "esbuild"
import { mkdirSync, readFileSync } from "node:fs"

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
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

await Promise.all([
  esbuild.build({ ...common, entryPoints: ["src/cli/main.ts"], outfile: "dist/cli.js", plugins: [noConfigFileParsers] }),
  // The plugin runs inside opencode's Bun: one self-contained file, `default` its only export, no chunks.
  // Its entry defers the plugin's evaluation to the first call (the dynamic import is inlined, not split).
  esbuild.build({ ...common, entryPoints: ["src/plugin/entry.ts"], outfile: "dist/opencode-plugin.js", external: [] }),
  esbuild.build({ ...common, entryPoints: ["bench/replay.ts"], outfile: "dist/bench-replay.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/route.ts"], outfile: "dist/bench-route.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/decode.ts"], outfile: "dist/bench-decode.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/sweep.ts"], outfile: "dist/bench-sweep.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/held.ts"], outfile: "dist/bench-held.js" }),
  esbuild.build({ ...common, entryPoints: ["bench/coldstart.ts"], outfile: "dist/bench-coldstart.js" })
])
