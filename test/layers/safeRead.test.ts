import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { LINE_MAX_CHARS, POOL_FILE_MAX_BYTES } from "../../src/core/readLimits.js"
import { LineSplitter } from "../../src/core/lines.js"
import { resolvePool } from "../../src/core/source.js"
import { gatherSources } from "../../src/layers/pool/PoolConfigFile.js"
import { lineReader, readTextFile } from "../../src/layers/fs/safeRead.js"

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-saferead-"))
const fifo = (path: string) => execFileSync("mkfifo", [path])

/** A user config directory holding `name` made by `make`, and the pool the chain resolves from it. */
const poolFrom = (name: string, make: (path: string) => void) => {
  const config = tmp()
  const dir = join(config, "opencode-pool")
  mkdirSync(dir)
  make(join(dir, name))
  const g = gatherSources({ models: undefined, modelsFile: undefined, maxSlots: 4, directory: config }, { ...process.env, XDG_CONFIG_HOME: config })
  return { dir, pool: resolvePool(g.sources, 4) }
}

describe("safeRead: every input file (docs/OPERATIONS.md Limits)", () => {
  it.live("US-7 a pool file that is a FIFO is refused without blocking: the chain warns and falls through", () =>
    Effect.sync(() => {
      const { pool } = poolFrom("pool.txt", fifo)
      expect(pool.origin).not.toMatch(/pool\.txt$/)
      expect(pool.warnings.some((w) => /pool\.txt unreadable \(not a regular file \(a FIFO\)\); falling through/.test(w))).toBe(true)
    })
  )

  it.live("US-7 a pool file linked to /dev/zero is refused without reading it", () =>
    Effect.sync(() => {
      const { pool } = poolFrom("pool.json", (p) => symlinkSync("/dev/zero", p))
      expect(pool.warnings.some((w) => w.includes("not a regular file (a character device)"))).toBe(true)
    })
  )

  it.live("US-7 a 100 MB pool file is refused by its size, never read whole", () =>
    Effect.sync(() => {
      const { pool } = poolFrom("pool.txt", (p) => {
        writeFileSync(p, "")
        truncateSync(p, 100_000_000)
      })
      expect(pool.warnings.some((w) => w.includes("unreadable (larger than 1 MiB)"))).toBe(true)
      expect(readTextFile(join(tmp(), "none"), POOL_FILE_MAX_BYTES)._tag).toBe("Missing")
    })
  )

  it.live("US-7 a pool file that is a symbolic link loop or a dangling link warns instead of being skipped in silence", () =>
    Effect.sync(() => {
      const loop = poolFrom("pool.txt", (p) => symlinkSync(p, p))
      expect(loop.pool.warnings.some((w) => w.includes("a symbolic link loop"))).toBe(true)
      const dangling = poolFrom("pool.json", (p) => symlinkSync(join(tmp(), "gone"), p))
      expect(dangling.pool.warnings.some((w) => w.includes("a dangling symbolic link"))).toBe(true)
    })
  )

  it.live("US-7 a pool.json that starts with a byte-order mark is read like any other", () =>
    Effect.sync(() => {
      const { pool } = poolFrom("pool.json", (p) => writeFileSync(p, '\ufeff{"slots":[{"model":"zen/bom"}]}'))
      expect(pool.slots.map((s) => s.model)).toEqual(["zen/bom"])
      expect(pool.warnings).toEqual([])
    })
  )

  it.live("US-45 a decisions file is read line by line: CRLF and a BOM are dropped, a runaway line comes out cut", () =>
    Effect.sync(() => {
      const path = join(tmp(), "expect.jsonl")
      writeFileSync(path, `\ufeffa\r\n\nb\n${"x".repeat(LINE_MAX_CHARS + 10)}\nc`)
      const r = lineReader(path, LINE_MAX_CHARS)
      if (!("next" in r)) throw new Error(`unexpected ${r._tag}`)
      const lines: Array<string> = []
      for (let l = r.next(); l !== undefined; l = r.next()) lines.push(l)
      expect(lines.map((l) => (l.length > 10 ? `long ${l.length}` : l))).toEqual(["a", "", "b", `long ${LINE_MAX_CHARS + 1}`, "c"])
    })
  )

  it("US-45 the line splitter keeps memory bounded across chunks and names a cut line by its length", () => {
    const s = new LineSplitter(4)
    expect([...s.push("ab"), ...s.push("c\nabcdefgh"), ...s.push("ijk\nx"), ...s.end()]).toEqual(["abc", "abcde", "x"])
  })
})
