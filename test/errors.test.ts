/**
 * The errors that carried one string (issue 34, item 7) are `Schema.TaggedError`s with fields: each
 * keeps what failed as data and renders, as `reason` and `message`, exactly the text its users and
 * logs saw before (docs/DECISIONS.md 250, 251).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Schema } from "effect"
import { decodeLine, InputError } from "../src/core/trace/input.js"
import { BadInput, CostUnknown, UsageProblem } from "../src/cli/errors.js"
import { dbFailure } from "../src/cli/shared/db.js"
import { FleetUnreachable } from "../src/cli/fleet/init.js"
import { causeLine } from "../src/layers/opencode/LoggerAppLog.js"
import { PopupsWriteError } from "../src/layers/notify/PopupsFile.js"
import { RecordsError } from "../src/layers/state/sharedStateOver.js"
import { AbortFailed } from "../src/services/opencode/AbortClient.js"
import { PromptFailed } from "../src/services/opencode/SessionPrompt.js"
import { LookupFailed } from "../src/services/opencode/SessionLookup.js"
import { DbBusy, DbFailed, NotOpencodeDb } from "../src/services/opencodeDb/errors.js"

describe("errors with fields render the text they always did", () => {
  it("US-32 opencode's database errors keep SQLite's code and words, the table and the columns; the CLI's lines are the same", () => {
    const busy = new DbBusy({ code: "SQLITE_BUSY", detail: "database is locked" })
    expect(busy).toMatchObject({ _tag: "DbBusy", code: "SQLITE_BUSY", detail: "database is locked" })
    expect([busy.reason, busy.message]).toEqual(["database is locked", "database is locked"])
    expect(new DbFailed({ detail: "disk I/O error" }).reason).toBe("disk I/O error")
    const columns = new NotOpencodeDb({ problem: "no-columns", table: "session", columns: ["parent_id", "time_created"] })
    expect(columns.columns).toEqual(["parent_id", "time_created"])
    expect(columns.reason).toBe("table 'session' has no column 'parent_id', 'time_created'")
    expect(new NotOpencodeDb({ problem: "no-table", table: "event" }).reason).toBe("no table 'event'")
    expect(new NotOpencodeDb({ problem: "cannot-open", detail: "file is not a database" }).reason).toBe("cannot open it (file is not a database)")
    expect(new NotOpencodeDb({ problem: "refused", code: "SQLITE_NOTADB", detail: "file is not a database" }).reason).toBe("file is not a database")
    expect(dbFailure("/x/opencode.db", columns)).toMatchObject({
      _tag: "BadInput",
      message: "/x/opencode.db is not an opencode database: table 'session' has no column 'parent_id', 'time_created'; nothing changed",
      value: "/x/opencode.db"
    })
    expect(dbFailure("/x/opencode.db", new DbFailed({ detail: "disk I/O error" }))).toMatchObject({ message: "database error: disk I/O error", exitCode: 1 })
  })

  it("US-10 an abort's failure keeps the session, the call and the status; its log line is the text it always was", () => {
    const http = new AbortFailed({ problem: "http", sessionId: "ses_1", call: "abort", status: 500 }, true)
    expect(http).toMatchObject({ _tag: "AbortFailed", sessionId: "ses_1", call: "abort", status: 500 })
    expect(http.reason).toBe("HTTP 500")
    expect(http.message).toBe("HTTP 500")
    expect(causeLine(Cause.fail(http))).toBe("HTTP 500")
    expect(Cause.pretty(Cause.fail(http)).split("\n")[0]).toBe("AbortFailed: HTTP 500")
    const texts = [
      new AbortFailed({ problem: "no-client", sessionId: "ses_1" }),
      new AbortFailed({ problem: "http", call: "abort", status: "error" }),
      new AbortFailed({ problem: "not-aborted", call: "abort" }),
      new AbortFailed({ problem: "still-running", ms: 1_000 }),
      new AbortFailed({ problem: "threw", call: "abort", detail: "fetch failed" }),
      new AbortFailed({ problem: "timeout", call: "status", ms: 10_000 })
    ].map((e) => e.reason)
    expect(texts).toEqual(["no server url", "HTTP error", "server says session was not aborted", "session still running after abort", "abort: fetch failed", "status: timed out after 10s"])
    // the fields survive an encode and a decode (what a Schema error is for)
    expect(Schema.decodeUnknownSync(AbortFailed)(Schema.encodeSync(AbortFailed)(http))).toMatchObject({ sessionId: "ses_1", status: 500, reason: "HTTP 500" })
  })

  it("US-11 a lookup's failure keeps the session and renders the same reason", () => {
    const texts = [
      new LookupFailed({ problem: "no-client", sessionId: "ses_1" }, true),
      new LookupFailed({ problem: "threw", sessionId: "ses_1", detail: "socket hang up" }, true),
      new LookupFailed({ problem: "timeout", sessionId: "ses_1", ms: 5_000 }, true),
      new LookupFailed({ problem: "unreadable", sessionId: "ses_1" }, true),
      new LookupFailed({ problem: "not-found", sessionId: "ses_1" }, true)
    ]
    expect(texts.map((e) => e.reason)).toEqual(["no opencode client", "socket hang up", "timed out after 5000 ms", "unreadable answer", "session not found"])
    expect(texts.every((e) => e.sessionId === "ses_1")).toBe(true)
  })

  it("US-50 a continuation's failure keeps the call and the status; the reason is the one the fallback logs", () => {
    const failed = new PromptFailed({ problem: "http", sessionId: "ses_1", call: "prompt", status: 429 })
    expect(failed).toMatchObject({ sessionId: "ses_1", call: "prompt", status: 429, reason: "prompt: HTTP 429", message: "prompt: HTTP 429" })
    expect(new PromptFailed({ problem: "still-running", sessionId: "ses_1", ms: 60_000 }).reason).toBe("session still running after 60s")
    expect(new PromptFailed({ problem: "no-session-id", call: "create" }).reason).toBe("create: the answer names no session id")
    expect(new PromptFailed({ problem: "no-client" }).reason).toBe("no server url")
  })

  it("US-40 a state.db statement's failure keeps the store, read or write, and the driver's words", () => {
    const e = new RecordsError({ store: "state.db", access: "write", detail: "database disk image is malformed" })
    expect(e).toMatchObject({ access: "write", reason: "state.db: database disk image is malformed" })
    expect(new PopupsWriteError({ path: "/s/popups.json", detail: "EACCES" }).reason).toBe("/s/popups.json: EACCES")
  })

  it("US-3 cost unknown keeps the model and the sources and says the line it always said", () => {
    const sources = [{ name: "catalog", path: "/c/models.json" }]
    expect(new CostUnknown({ model: "zen/x", sources }).message).toBe("cost unknown: no price for the baseline model zen/x in any price source (catalog /c/models.json)")
    expect(new CostUnknown({ model: "zen/x", sources: [] }).message).toBe("cost unknown: no price for the baseline model zen/x in any price source (none readable)")
    expect(new BadInput({ message: "--for 1x: bad", option: "--for", value: "1x" })).toMatchObject({ _tag: "BadInput", message: "--for 1x: bad", option: "--for", value: "1x" })
    expect(new UsageProblem({ message: "--trace goes with --watch", option: "--trace" }).message).toBe("--trace goes with --watch")
  })

  it("US-52 fleet init's unreachable server keeps the masked URL and the driver's reason, and says the line it always said", () => {
    const e = new FleetUnreachable({ problem: "unreachable", url: "postgres://u:***@db:5432/pool", detail: "connect ECONNREFUSED 127.0.0.1:5432" })
    expect(e.message).toBe("cannot reach PostgreSQL at postgres://u:***@db:5432/pool: connect ECONNREFUSED 127.0.0.1:5432")
    expect(new FleetUnreachable({ problem: "not-fleet", url: "sqlite" }).message).toBe("fleet init: sqlite did not select the PostgreSQL backend")
  })

  it("US-45 a trace line's error names the field at fault; its message is the one the replay shows", () => {
    const missing = decodeLine(JSON.stringify({ at: 1, type: "spawn" }))
    expect(missing).toBeInstanceOf(InputError)
    expect(missing).toMatchObject({ field: "claim", message: 'missing required field "claim"' })
    const badJson = decodeLine("{")
    expect(badJson).toMatchObject({ _tag: "InputError" })
    expect((badJson as InputError).field).toBeUndefined()
    expect((badJson as InputError).message).toMatch(/^invalid JSON: /)
  })
})
