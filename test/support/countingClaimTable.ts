/**
 * A counting variant of the claim table (src/core/trace/claimTable.ts), built only for tests: the
 * production source with one counter bumped on every iteration of every loop in it, so a test can
 * bound the work the table does per trace line without the production file carrying a counter. The
 * source is rewritten with the TypeScript parser (each loop body gets `__loops.n++` first), its
 * relative imports pointed back at the real modules, and the result written to a temporary file that
 * a test installs in place of the table with `vi.mock`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const SOURCE = fileURLToPath(new URL("../../src/core/trace/claimTable.ts", import.meta.url))

/** The loop counter a counting variant exports beside the table's own exports. */
export interface LoopCounter {
  readonly __loops: { n: number }
}

/** The counting variant's source: `{ text, loops }`, `loops` the number of loop statements instrumented. */
export const countingSource = (source: string = readFileSync(SOURCE, "utf8"), from: string = SOURCE): { readonly text: string; readonly loops: number } => {
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
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && node.moduleSpecifier.text.startsWith(".")) {
      const target = resolve(dirname(from), node.moduleSpecifier.text).replace(/\.js$/, ".ts")
      edits.push({ at: node.moduleSpecifier.getStart(file), insert: `${JSON.stringify(target)} /* ` }, { at: node.moduleSpecifier.getEnd(), insert: " */" })
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  let text = source
  for (const edit of [...edits].sort((a, b) => b.at - a.at)) text = text.slice(0, edit.at) + edit.insert + text.slice(edit.at)
  return { text: `export const __loops = { n: 0 }\n${text}`, loops }
}

/** Writes the counting variant to a temporary file and returns its path (import it in a `vi.mock` factory). */
export const countingClaimTablePath = (): string => {
  const { text, loops } = countingSource()
  if (loops === 0) throw new Error("countingClaimTable: no loop found in the claim table's source")
  const path = join(mkdtempSync(join(tmpdir(), "ocpool-claim-table-")), "claimTable.counting.ts")
  writeFileSync(path, text)
  return path
}
