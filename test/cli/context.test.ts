/** `ocpool context status` and `ocpool context refresh` (epic G, US-20/US-22), run as the built CLI over temporary projects and state dirs. */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { emptyRecord, type ContextRecord } from "../../src/core/context/record.js"
import { contextQueuedIn, contextRecordIn, seedContextRecord } from "../support/stateDb.js"
import { cli, ensureBuilt, stub } from "./builtCli.js"

const tmp = (prefix = "ocpool-ctx-") => realpathSync(mkdtempSync(join(tmpdir(), prefix)))
const stateDir = () => {
  const dir = tmp("ocpool-ctx-state-")
  chmodSync(dir, 0o700)
  return dir
}

const ocpool = (args: ReadonlyArray<string>, opts: { cwd?: string; env?: Record<string, string> } = {}) => {
  const r = spawnSync(process.execPath, [cli, ...args], {
    encoding: "utf8",
    timeout: 30_000,
    cwd: opts.cwd,
    env: { ...process.env, XDG_CONFIG_HOME: tmp(), OCPOOL_STATE_DIR: "", NO_COLOR: "1", ...opts.env }
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const HOUR = 3_600_000

/** A project with a map: architecture.md (`bytes` long) and manager.md, both written `ago` ms ago. */
const project = (bytes = 2048, ago = HOUR) => {
  const root = tmp("ocpool-ctx-proj-")
  const map = join(root, ".opencode", "context")
  mkdirSync(map, { recursive: true })
  writeFileSync(join(map, "architecture.md"), "a".repeat(bytes))
  writeFileSync(join(map, "manager.md"), "goals")
  const when = new Date(Date.now() - ago)
  for (const f of ["architecture.md", "manager.md"]) utimesSync(join(map, f), when, when)
  return root
}

const withRecord = (dir: string, record: ContextRecord) => seedContextRecord(dir, record)

const git = (cwd: string, args: ReadonlyArray<string>, date?: Date) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    stdio: "ignore",
    env: { ...process.env, ...(date === undefined ? {} : { GIT_AUTHOR_DATE: date.toISOString(), GIT_COMMITTER_DATE: date.toISOString() }) }
  })

beforeAll(() => ensureBuilt("context status --help"), 180_000)

describe("ocpool context status", () => {
  it("US-20 a project that is not a git repository: files with sizes and ages, manager.md, the budget, the pending paths as the change count, the runs", () => {
    const dir = stateDir()
    const root = project(2048)
    const now = Date.now()
    withRecord(dir, {
      ...emptyRecord(root),
      writtenAt: now,
      pending: Array.from({ length: 27 }, (_, i) => `src/f${i}.ts`),
      lastStartedAt: now - 20 * 60_000,
      lastRun: { run: "r1", kind: "bootstrap", startedAt: now - 20 * 60_000, endedAt: now - 19 * 60_000, outcome: "ok", paths: 3 }
    })
    const r = ocpool(["context", "status", "--project", root, "--state-dir", dir])
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    const lines = r.stdout.trimEnd().split("\n")
    expect(lines.slice(0, 9)).toEqual([
      `context map of ${root}`,
      `  ${root}/.opencode/context`,
      "  architecture.md      2 KiB  written 1h00m ago",
      "  contexts.md      missing",
      "  conventions.md   missing",
      "  workflows.md     missing",
      "  decisions.md     missing",
      "  manager.md             5 B  written 1h00m ago  (yours: read by every agent, not counted)",
      "  total 2 KiB of the 24 KiB budget"
    ])
    expect(lines).toContain("changed since the map was last written: 27 pending paths (the edits opencode saw: not a git repository, or git did not answer)")
    expect(lines).toContain("pending: 27 paths")
    expect(lines).toContain("  src/f24.ts")
    expect(lines).not.toContain("  src/f25.ts")
    expect(lines).toContain("  …and 2 more")
    expect(lines).toContain("in flight: none")
    expect(lines.some((l) => /^last run: bootstrap run r1 ok, ended 19m0\ds ago after 1m00s, 3 paths$/.test(l))).toBe(true)
    expect(lines.at(-1)).toBe("refresh queued: no")
  })

  it("US-20 the project defaults to the current directory; a map over the budget (--max-bytes) gets the warning line", () => {
    const root = project(3000)
    const r = ocpool(["context", "status", "--max-bytes", "2048", "--state-dir", stateDir()], { cwd: root })
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`context map of ${root}\n`)
    expect(r.stdout).toContain("  total 2.9 KiB of the 2 KiB budget\nwarning: map is 2.9 KiB, over the 2 KiB budget: the next refresh asks to condense it\n")
    expect(ocpool(["context", "status", "--state-dir", stateDir()], { cwd: root }).stdout).not.toContain("warning:")
  })

  it("US-20 without --max-bytes the budget is the one the plugin recorded (option contextMap.maxBytes)", () => {
    const root = project(3000)
    const dir = stateDir()
    withRecord(dir, { ...emptyRecord(root), maxBytes: 2048 })
    const r = ocpool(["context", "status", "--state-dir", dir], { cwd: root })
    expect(r.stdout).toContain("  total 2.9 KiB of the 2 KiB budget\nwarning: map is 2.9 KiB, over the 2 KiB budget")
    expect(ocpool(["context", "status", "--max-bytes", "8192", "--state-dir", dir], { cwd: root }).stdout).not.toContain("warning:")
  })

  it("US-20 a git repository: files committed since the map was written, modified or untracked now, counted once; the map, skipped paths and older commits left out", () => {
    const root = project(100, HOUR)
    const dir = stateDir()
    withRecord(dir, { ...emptyRecord(root), pending: ["only/one.ts"] })
    git(root, ["init", "-q", "."])
    writeFileSync(join(root, "old.ts"), "1")
    writeFileSync(join(root, "keep.ts"), "1")
    git(root, ["add", "old.ts", "keep.ts"])
    git(root, ["commit", "-qm", "before the map"], new Date(Date.now() - 2 * HOUR))
    mkdirSync(join(root, "node_modules", "m"), { recursive: true })
    writeFileSync(join(root, "node_modules", "m", "i.js"), "1")
    writeFileSync(join(root, "new.ts"), "1")
    git(root, ["add", "-f", "new.ts", "node_modules", ".opencode"])
    git(root, ["commit", "-qm", "after the map"])
    writeFileSync(join(root, "keep.ts"), "2")
    writeFileSync(join(root, "new.ts"), "2")
    writeFileSync(join(root, "untracked.ts"), "1")
    mkdirSync(join(root, "dist"))
    writeFileSync(join(root, "dist", "out.js"), "1")
    const r = ocpool(["context", "status", "--project", root, "--state-dir", dir])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("changed since the map was last written: 3 files (git: committed since, modified or untracked)\n")
    expect(r.stdout).toContain("pending: 1 path\n  only/one.ts\n")
    const json = JSON.parse(ocpool(["context", "status", "--json", "--project", root, "--state-dir", dir]).stdout)
    expect(json.changed).toMatchObject({ source: "git", count: 3 })
  })

  it("US-20 git missing or failing: the count falls back to the pending paths, never a stack trace", () => {
    const root = project()
    const dir = stateDir()
    withRecord(dir, { ...emptyRecord(root), pending: ["a.ts", "b.ts"] })
    git(root, ["init", "-q", "."])
    const bin = tmp("ocpool-ctx-bin-")
    stub(bin, "git", 128, "fatal: broken\n")
    for (const PATH of [bin, tmp("ocpool-ctx-empty-")]) {
      const r = ocpool(["context", "status", "--project", root, "--state-dir", dir], { env: { PATH } })
      expect(r.stderr).toBe("")
      expect(r.code).toBe(0)
      expect(r.stdout).toContain("changed since the map was last written: 2 pending paths (the edits opencode saw")
    }
  })

  it("US-20 --json: one object with every documented field", () => {
    const root = project(1500)
    const dir = stateDir()
    const now = Date.now()
    const inFlight = { run: "r2", kind: "update" as const, session: "ses_1", startedAt: now - 60_000, paths: ["x.ts"], host: "devbox", pid: 4242 }
    withRecord(dir, { ...emptyRecord(root), pending: ["src/a.ts"], dropped: 2, lastStartedAt: now - 60_000, inFlight })
    const r = ocpool(["context", "status", "--json", "--project", root, "--state-dir", dir])
    expect(r.code).toBe(0)
    expect(r.stdout.trimEnd().split("\n")).toHaveLength(1)
    const v = JSON.parse(r.stdout)
    expect(Object.keys(v).sort()).toEqual(
      ["root", "mapDir", "exists", "files", "totalBytes", "maxBytes", "overBudget", "lastWrittenAt", "changed", "pending", "lastStartedAt", "inFlight", "lastRun", "queuedAt", "record"].sort()
    )
    expect(v).toMatchObject({
      root,
      mapDir: `${root}/.opencode/context`,
      exists: true,
      totalBytes: 1500,
      maxBytes: 24_576,
      overBudget: false,
      changed: { source: "pending", count: 1 },
      pending: { count: 1, dropped: 2, paths: ["src/a.ts"] },
      inFlight,
      lastRun: null,
      queuedAt: null,
      record: true
    })
    expect(v.files).toHaveLength(6)
    expect(v.files[0]).toMatchObject({ name: "architecture.md", present: true, bytes: 1500, manager: false })
    expect(v.files[5]).toMatchObject({ name: "manager.md", present: true, bytes: 5, manager: true })
    expect(Number.isInteger(v.lastWrittenAt)).toBe(true)
  })

  it("US-20 a project without a map or a record, and a state dir that does not exist yet: exit 0, the map missing", () => {
    const root = tmp("ocpool-ctx-bare-")
    const r = ocpool(["context", "status", "--project", root, "--state-dir", join(tmp(), "absent")])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`  ${root}/.opencode/context: missing (the first refresh writes it`)
    expect(r.stdout).toContain("changed since the map was last written: no map yet; 0 pending paths\n")
  })
})

describe("ocpool context refresh", () => {
  it("US-22 writes the project's marker ({at}, in state.db, 0600) and says when the refresh starts; status then shows it queued; the record is untouched", () => {
    const root = project()
    const dir = stateDir()
    withRecord(dir, { ...emptyRecord(root), pending: ["a.ts"] })
    const before = contextRecordIn(dir, root)
    const t0 = Date.now()
    const r = ocpool(["context", "refresh", "--project", root, "--state-dir", dir])
    expect(r).toEqual({ code: 0, stdout: `refresh queued for ${root}: it starts when a root session of opencode goes idle in that project\n`, stderr: "" })
    expect(statSync(join(dir, "state.db")).mode & 0o777).toBe(0o600)
    const at = contextQueuedIn(dir, root)
    expect(at).toBeGreaterThanOrEqual(t0)
    expect(at).toBeLessThanOrEqual(Date.now())
    expect(contextRecordIn(dir, root)).toEqual(before)
    expect(ocpool(["context", "status", "--project", root, "--state-dir", dir]).stdout).toMatch(/\nrefresh queued: yes, \ds ago \(starts at the next idle of a root session\)\n$/)
  })

  it("US-22 a state dir that does not exist yet is created; one that cannot be is exit 1 with one line", () => {
    const root = project()
    const dir = join(tmp(), "new", "state")
    expect(ocpool(["context", "refresh", "--project", root, "--state-dir", dir]).code).toBe(0)
    expect(contextQueuedIn(dir, root)).toBeDefined()
    const file = join(tmp(), "file")
    writeFileSync(file, "x")
    const r = ocpool(["context", "refresh", "--project", root, "--state-dir", file])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe(`ocpool: ${file}: cannot queue the refresh: exists and is not a directory\n`)
  })
})

describe("ocpool context: bad input", () => {
  const aFile = join(tmp("ocpool-ctx-f-"), "plain")
  writeFileSync(aFile, "x")
  it.each<[string, ReadonlyArray<string>, RegExp]>([
    ["a missing --project", ["context", "status", "--project", "/nonexistent/ocpool-ctx"], /^ocpool: --project \/nonexistent\/ocpool-ctx: no such directory\n$/],
    ["a missing --project (refresh)", ["context", "refresh", "--project", "/nonexistent/ocpool-ctx"], /^ocpool: --project \/nonexistent\/ocpool-ctx: no such directory\n$/],
    ["a --project that is a file", ["context", "status", "--project", aFile], /^ocpool: --project \S+\/plain: not a directory\n$/],
    ["an empty --project", ["context", "status", "--project", ""], /^ocpool: --project: an empty path\n$/],
    ["a bad --max-bytes", ["context", "status", "--max-bytes", "24k"], /^ocpool: --max-bytes 24k: a whole number of bytes, 1 or more\n$/],
    ["a zero --max-bytes", ["context", "status", "--max-bytes", "0"], /^ocpool: --max-bytes 0: a whole number of bytes, 1 or more\n$/]
  ])("US-20 %s: exit 2, one line, nothing on stdout", (_what, args, stderr) => {
    const r = ocpool([...args, "--state-dir", stateDir()])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toMatch(stderr)
  })

  it("US-20 --help tells where the budget comes from and what refresh does", () => {
    const status = ocpool(["context", "status", "--help"])
    expect(status.code).toBe(0)
    expect(status.stdout).toContain("--max-bytes")
    expect(status.stdout.replace(/\s+/g, " ")).toContain("contextMap.maxBytes")
    expect(status.stdout).toContain("24576")
    const refresh = ocpool(["context", "refresh", "--help"])
    expect(refresh.stdout.replace(/\s+/g, " ")).toContain("goes idle")
    expect(ocpool(["context", "--help"]).stdout).toContain("refresh")
  })
})
