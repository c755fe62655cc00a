/** `ocpool context status`'s view (epic G, US-20): the JSON-ready object and its text, and git's output read into changed paths. */
import { describe, expect, it } from "@effect/vitest"
import type { MapFacts } from "../../../src/core/context/mapFacts.js"
import { NO_MAP } from "../../../src/core/context/mapFacts.js"
import type { ContextRecord } from "../../../src/core/context/record.js"
import { contextStatusLines, contextStatusView, gitChangedPaths, sizeText } from "../../../src/core/context/view.js"
import { ageText } from "../../../src/core/time.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const MIN = 60_000

describe("context status text: narrow (nothing yet)", () => {
  it("US-20 no map, no record: the map dir missing, every count 0, nothing in flight, no run, nothing queued", () => {
    const v = contextStatusView({ root: "/p", facts: NO_MAP, record: undefined, queuedAt: undefined, changed: { source: "pending", count: 0, since: null }, maxBytes: 24576 })
    expect(v).toMatchObject({ root: "/p", mapDir: "/p/.opencode/context", exists: false, totalBytes: 0, overBudget: false, lastWrittenAt: null, record: false, queuedAt: null })
    expect(v.files.map((f) => [f.name, f.present])).toEqual([
      ["architecture.md", false],
      ["contexts.md", false],
      ["conventions.md", false],
      ["workflows.md", false],
      ["decisions.md", false],
      ["manager.md", false]
    ])
    expect(contextStatusLines(v, NOW)).toEqual([
      "context map of /p",
      "  /p/.opencode/context: missing (the first refresh writes it: /context-init, or an edit and an idle)",
      "  total 0 B of the 24 KiB budget",
      "changed since the map was last written: no map yet; 0 pending paths",
      "pending: 0 paths",
      "in flight: none",
      "last run: none yet",
      "refresh queued: no"
    ])
  })
})

describe("context status text: wide (everything)", () => {
  const facts: MapFacts = {
    exists: true,
    files: [
      { name: "architecture.md", bytes: 20_000, mtimeMs: NOW - 2 * 3_600_000 - 5 * MIN + 0.7 },
      { name: "decisions.md", bytes: 8_000, mtimeMs: NOW - 30_000 },
      { name: "manager.md", bytes: 700, mtimeMs: NOW - 3 * 86_400_000, manager: true }
    ]
  }
  const record: ContextRecord = {
    root: "/home/u/p",
    writtenAt: NOW - 1000,
    pending: Array.from({ length: 30 }, (_, i) => `src/f${i}.ts`),
    dropped: 4,
    lastStartedAt: NOW - 3 * MIN,
    inFlight: { run: "r7", kind: "update", session: "ses_9", startedAt: NOW - 3 * MIN, paths: ["src/x.ts", "src/y.ts"], host: "devbox", pid: 4242 },
    lastRun: { run: "r6", kind: "bootstrap", startedAt: NOW - 20 * MIN - 90_000, endedAt: NOW - 20 * MIN, outcome: "failed", paths: 1, reason: "session error" },
    maxBytes: null
  }
  const v = contextStatusView({ root: "/home/u/p", facts, record, queuedAt: NOW - 45_000, changed: { source: "git", count: 7, since: NOW - 30_000 }, maxBytes: 24_576 })

  it("US-20 the view: five files in order then manager.md, total over the five only, over budget, last written, every record part", () => {
    expect(v.files.filter((f) => f.present).map((f) => [f.name, f.bytes, f.manager])).toEqual([
      ["architecture.md", 20_000, false],
      ["decisions.md", 8_000, false],
      ["manager.md", 700, true]
    ])
    expect(v.files[0]!.mtimeMs).toBe(NOW - 2 * 3_600_000 - 5 * MIN)
    expect(v).toMatchObject({ totalBytes: 28_000, maxBytes: 24_576, overBudget: true, lastWrittenAt: NOW - 30_000, queuedAt: NOW - 45_000, record: true, lastStartedAt: NOW - 3 * MIN })
    expect(v.pending).toEqual({ count: 30, dropped: 4, paths: record.pending })
    expect(v.inFlight).toEqual(record.inFlight)
    expect(v.lastRun).toEqual(record.lastRun)
  })

  it("US-20 the text: sizes and ages, the budget warning, the git count, 25 pending paths and `…and 5 more`, the runs, the queued refresh", () => {
    expect(contextStatusLines(v, NOW)).toEqual([
      "context map of /home/u/p",
      "  /home/u/p/.opencode/context",
      "  architecture.md   19.5 KiB  written 2h05m ago",
      "  contexts.md      missing",
      "  conventions.md   missing",
      "  workflows.md     missing",
      "  decisions.md       7.8 KiB  written 30s ago",
      "  manager.md           700 B  written 3d00h ago  (yours: read by every agent, not counted)",
      "  total 27.3 KiB of the 24 KiB budget",
      "warning: map is 27.3 KiB, over the 24 KiB budget: the next refresh asks to condense it",
      "changed since the map was last written: 7 files (git: committed since, modified or untracked)",
      "pending: 30 paths (and 4 more not kept)",
      ...record.pending.slice(0, 25).map((p) => `  ${p}`),
      "  …and 5 more",
      "in flight: update run r7, started 3m00s ago on devbox pid 4242, session ses_9, 2 paths",
      "last run: bootstrap run r6 failed (session error), ended 20m00s ago after 1m30s, 1 path",
      "refresh queued: yes, 45s ago (starts at the next idle of a root session)"
    ])
  })

  it("US-20 a map within budget has no warning; pending counts stand in for git; an unchanged run and an unknown host read plainly", () => {
    const small = contextStatusView({
      root: "/",
      facts: { exists: true, files: [{ name: "contexts.md", bytes: 1024, mtimeMs: NOW }] },
      record: { ...record, pending: ["a"], dropped: 0, inFlight: { ...record.inFlight!, session: null, host: "", pid: 0, paths: [] }, lastRun: { ...record.lastRun!, outcome: "unchanged", reason: "" } },
      queuedAt: undefined,
      changed: { source: "pending", count: 1, since: NOW },
      maxBytes: 24_576
    })
    const lines = contextStatusLines(small, NOW)
    expect(small.mapDir).toBe("/.opencode/context")
    expect(lines.some((l) => l.startsWith("warning:"))).toBe(false)
    expect(lines).toContain("  total 1 KiB of the 24 KiB budget")
    expect(lines).toContain("changed since the map was last written: 1 pending path (the edits opencode saw: not a git repository, or git did not answer)")
    expect(lines).toContain("pending: 1 path")
    expect(lines).toContain("in flight: update run r7, started 3m00s ago, 0 paths")
    expect(lines).toContain("last run: bootstrap run r6 ended without changing the map, ended 20m00s ago after 1m30s, 1 path")
  })
})

describe("ages and sizes", () => {
  it.each<[number, string]>([
    [-5000, "0s"],
    [999, "0s"],
    [42_000, "42s"],
    [185_000, "3m05s"],
    [2 * 3_600_000 + 10 * MIN, "2h10m"],
    [3 * 86_400_000 + 4 * 3_600_000, "3d04h"]
  ])("US-20 ageText(%i) = %s", (ms, text) => expect(ageText(ms)).toBe(text))

  it.each<[number, string]>([
    [0, "0 B"],
    [1023, "1023 B"],
    [1024, "1 KiB"],
    [1536, "1.5 KiB"],
    [24_576, "24 KiB"],
    [150 * 1024 + 300, "150 KiB"],
    [3 * 1024 * 1024 / 2, "1.5 MiB"]
  ])("US-20 sizeText(%i) = %s", (bytes, text) => expect(sizeText(bytes)).toBe(text))
})

describe("changed paths from git's output", () => {
  it("US-20 log and status paths, relative to the repository top, become project paths; outside the project, the map and skipped segments are left out; a rename counts its new name (a nested project's map is a plain file of the outer one)", () => {
    const log = "src/a.ts\0sub/p/x.ts\0\0\nsub/p/x.ts\0sub/p/.opencode/context/architecture.md\0sub/p/node_modules/m/i.js\0other/o.ts\0"
    const status = " M sub/p/y.ts\0?? sub/p/new file.ts\0R  sub/p/renamed.ts\0sub/p/old.ts\0?? sub/p/dist/out.js\0"
    expect([...gitChangedPaths("/repo/sub/p", "/repo", log, status)].sort()).toEqual(["new file.ts", "renamed.ts", "x.ts", "y.ts"])
    expect([...gitChangedPaths("/repo", "/repo/", log, "")].sort()).toEqual(["other/o.ts", "src/a.ts", "sub/p/.opencode/context/architecture.md", "sub/p/x.ts"])
    expect(gitChangedPaths("/repo", "/repo", "", "").size).toBe(0)
  })
})
