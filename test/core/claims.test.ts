import { describe, expect, it } from "@effect/vitest"
import { isLockStale, judgeClaimFile, type ClaimFileFacts } from "../../src/core/claims.js"

const NOW = 1_796_115_600_000
const HOST = "devbox"
const file = (fields: Partial<ClaimFileFacts>): ClaimFileFacts => ({
  name: "claims.4242.json",
  isTmp: false,
  mtimeMs: NOW - 1_000,
  content: { pid: 4242, host: HOST, startTime: "100" },
  pidState: "alive",
  liveStartTime: "100",
  ...fields
})

describe("claim files and the lock (SPEC §5.2-5.3)", () => {
  it("US-41 a claim file whose pid is not alive is deleted at once", () => {
    expect(judgeClaimFile(file({ pidState: "dead" }), HOST, NOW)).toBe("delete")
  })

  it("US-41 a live pid with a different start time is a reused pid: deleted", () => {
    expect(judgeClaimFile(file({ liveStartTime: "999" }), HOST, NOW)).toBe("delete")
  })

  it("US-41 a live pid with the same start time, or unknown start times, is kept", () => {
    expect(judgeClaimFile(file({}), HOST, NOW)).toBe("read")
    expect(judgeClaimFile(file({ liveStartTime: null }), HOST, NOW)).toBe("read")
    expect(judgeClaimFile(file({ content: { pid: 4242, host: HOST, startTime: null } }), HOST, NOW)).toBe("read")
  })

  it("US-41 EPERM counts as alive (the shell reports it as alive)", () => {
    expect(judgeClaimFile(file({ pidState: "alive", liveStartTime: undefined }), HOST, NOW)).toBe("read")
  })

  it("US-41 a file from another host is judged by mtime only: 1 min old and an unknown pid is kept", () => {
    expect(judgeClaimFile(file({ content: { pid: 1, host: "laptop", startTime: "1" }, pidState: "dead", mtimeMs: NOW - 60_000 }), HOST, NOW)).toBe("read")
    expect(judgeClaimFile(file({ content: { pid: 1, host: "laptop", startTime: "1" }, mtimeMs: NOW - 21 * 60_000 }), HOST, NOW)).toBe("delete")
  })

  it("US-9 a claim file whose mtime is 3 h old is deleted, whatever its holder", () => {
    expect(judgeClaimFile(file({ mtimeMs: NOW - 3 * 3_600_000 }), HOST, NOW)).toBe("delete")
  })

  it("US-9 a .tmp 10 min old is deleted, one 1 s old is left alone, and neither is read", () => {
    expect(judgeClaimFile(file({ isTmp: true, mtimeMs: NOW - 600_000 }), HOST, NOW)).toBe("delete")
    expect(judgeClaimFile(file({ isTmp: true, mtimeMs: NOW - 1_000 }), HOST, NOW)).toBe("skip")
  })

  it("US-9 an unparseable claim file is skipped while young and deleted after 60 s", () => {
    expect(judgeClaimFile(file({ content: undefined, mtimeMs: NOW - 1_000 }), HOST, NOW)).toBe("skip")
    expect(judgeClaimFile(file({ content: undefined, mtimeMs: NOW - 61_000 }), HOST, NOW)).toBe("delete")
  })

  it("US-40 a lock naming a dead pid is stale; a live holder's lock 1 s old is not; 6 s old is", () => {
    const lock = (at: number, pidState: "alive" | "dead") => ({ content: { pid: 7, host: HOST, startTime: "5", at }, mtimeMs: at, pidState, liveStartTime: "5" })
    expect(isLockStale(lock(NOW - 100, "dead"), HOST, NOW)).toBe(true)
    expect(isLockStale(lock(NOW - 1_000, "alive"), HOST, NOW)).toBe(false)
    expect(isLockStale(lock(NOW - 6_000, "alive"), HOST, NOW)).toBe(true)
    expect(isLockStale({ ...lock(NOW - 100, "alive"), liveStartTime: "6" }, HOST, NOW)).toBe(true)
    expect(isLockStale({ content: undefined, mtimeMs: NOW - 1_000 }, HOST, NOW)).toBe(false)
    expect(isLockStale({ content: undefined, mtimeMs: NOW - 6_000 }, HOST, NOW)).toBe(true)
  })
})
