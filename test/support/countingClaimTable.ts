/**
 * A counting variant of the claim table (src/core/trace/claimTable.ts and its parts, claimTypes.ts,
 * claimStore.ts, claimQueries.ts), built only for tests: the production sources with
 * one shared counter bumped on every iteration of every loop in them, so a test can bound the work the
 * table does per trace line without the production files carrying a counter. Each source is rewritten
 * with the TypeScript parser (each loop body gets `__loops.n++` first), its imports of the table's own
 * parts pointed at their counting variants and its other relative imports back at the real modules,
 * and the results written to a temporary directory; a test installs its `claimTable.ts` in place of
 * the table with `vi.mock`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const SOURCE = fileURLToPath(new URL("../../src/core/trace/claimTable.ts", import.meta.url))
/** The table's modules: the entry and its parts, all instrumented. */
const PARTS = ["claimTable", "claimTypes", "claimStore", "claimQueries"]

/** The loop counter a counting variant exports beside the table's own exports. */
export interface LoopCounter {
  readonly __loops: { n: number }
}

/**
 * The counting variant's source: `{ text, loops }`, `loops` the number of loop statements instrumented.
 * An import of one of `parts` (a module name beside `from`) stays relative: its counting variant is
 * written beside this one.
 */
export const countingSource = (source: string = readFileSync(SOURCE, "utf8"), from: string = SOURCE, parts: ReadonlyArray<string> = []): { readonly text: string; readonly loops: number } => {
  const file = ts.createSourceFile(from, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const edits: Array<{ readonly at: number; readonly insert: string }> = []
  let loops = 0
  const visit = (node: ts.Node): void => {
    if (ts.isIterationStatement(node, false)) {
      loops++
      const body = node.statement
      if (ts.isBlock(body)) edits.push({ at: body.getStart(file) + 1, insert: " __loops.n++;" })
      else edits.push({ at: body.getStart(file), insert: "{ __loops.n++; " }, { at: body.getEnd(), insert: " }" })
    }
    const spec = (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier) ? node.moduleSpecifier : undefined
    const sibling = spec !== undefined && parts.some((p) => spec.text === `./${p}.js`)
    if (spec !== undefined && sibling) edits.push({ at: spec.getStart(file), insert: `${JSON.stringify(spec.text.replace(/\.js$/, ".ts"))} /* ` }, { at: spec.getEnd(), insert: " */" })
    else if (spec !== undefined && spec.text.startsWith(".")) {
      const target = resolve(dirname(from), spec.text).replace(/\.js$/, ".ts")
      edits.push({ at: spec.getStart(file), insert: `${JSON.stringify(target)} /* ` }, { at: spec.getEnd(), insert: " */" })
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  let text = source
  for (const edit of [...edits].sort((a, b) => b.at - a.at)) text = text.slice(0, edit.at) + edit.insert + text.slice(edit.at)
  // the counter is one module all the parts share; the entry exports it beside the table's exports
  return { text: `import { __loops } from "./loops.counting.ts"\n${parts.length > 0 && from === SOURCE ? 'export { __loops } from "./loops.counting.ts"\n' : ""}${text}`, loops }
}

/** Writes the counting variants to a temporary directory and returns the entry's path (import it in a `vi.mock` factory). */
export const countingClaimTablePath = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-claim-table-"))
  writeFileSync(join(dir, "loops.counting.ts"), "export const __loops = { n: 0 }\n")
  let loops = 0
  for (const part of PARTS) {
    const from = join(dirname(SOURCE), `${part}.ts`)
    const counted = countingSource(readFileSync(from, "utf8"), from, PARTS)
    loops += counted.loops
    writeFileSync(join(dir, `${part}.ts`), counted.text)
  }
  if (loops === 0) throw new Error("countingClaimTable: no loop found in the claim table's sources")
  return join(dir, "claimTable.ts")
}
