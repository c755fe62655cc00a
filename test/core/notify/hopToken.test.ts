/**
 * The hop token (core/notify/hopToken.ts; docs/DECISIONS.md, a departure from SPEC §10.5's wire
 * format): one shell-inert word `ocpool-notify-b64/1.<base64url>` carries the payload of §10.6; the
 * receiver decodes it, then reads the payload exactly as a plain one. Node's own base64url
 * (`Buffer`) is the oracle of the encoding.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { sshArgs } from "../../../src/core/notify/channel.js"
import {
  base64UrlLength,
  elideTokens,
  encodeHopToken,
  fromBase64Url,
  HOP_TOKEN_MAX_BYTES,
  HOP_TOKEN_OF_MAX_PAYLOAD,
  HOP_TOKEN_PREFIX,
  PROBE_ANSWER,
  probeAnswer,
  readHopToken,
  shellAnswer,
  toBase64Url
} from "../../../src/core/notify/hopToken.js"
import { MESSAGE_MAX, PAYLOAD_MAX_BYTES, TITLE_MAX } from "../../../src/core/notify/limits.js"
import { decodePayload, encodeClose, encodeProbe, encodeShow, PAYLOAD_HEADER, UNRECOGNISED_TITLE } from "../../../src/core/notify/payload.js"

/** Node's base64url of the UTF-8 bytes: the oracle. */
const nodeToken = (payload: string | Uint8Array): string => HOP_TOKEN_PREFIX + Buffer.from(typeof payload === "string" ? Buffer.from(payload, "utf8") : payload).toString("base64url")
/** Only what no shell acts on. */
const INERT = /^[A-Za-z0-9._/-]+$/
/** A string with its lone surrogates as U+FFFD (what any UTF-8 encoder writes for them). */
const wellFormed = (s: string): string => Buffer.from(s, "utf8").toString("utf8")

const texts = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.fullUnicodeString({ maxLength: 200 }),
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.string({ unit: fc.constantFrom("$(", ")", "`", ";", "&", "|", "'", '"', "\\", "\n", "\r", "\u0000", " ", "=", "*", "~", "#", "é", "😀", "\ufeff", "\ud800"), maxLength: 200 })
)

describe("the hop token: encoding (SPEC §10.6 payload, docs/DECISIONS.md wire form)", () => {
  it.prop("US-18.1 any payload becomes one word of [A-Za-z0-9._/-], Node's base64url of its UTF-8 behind the prefix, and reads back as the same payload", [texts], ([p]) => {
    const t = encodeHopToken(p)
    expect(t).toMatch(INERT)
    expect(t).toBe(nodeToken(p))
    expect(t.startsWith(HOP_TOKEN_PREFIX)).toBe(true)
    expect(t).toHaveLength(HOP_TOKEN_PREFIX.length + base64UrlLength(Buffer.byteLength(p, "utf8")))
    expect(readHopToken(t)).toEqual({ _tag: "Token", payload: wellFormed(p) })
  })

  it.prop("US-18 base64url here is canonical: a text decodes exactly when Node re-encodes its bytes to the same text, and then to Node's bytes", [fc.string({ unit: fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=. ".split("")), maxLength: 40 })], ([s]) => {
    const got = fromBase64Url(s)
    const node = Buffer.from(s, "base64url")
    const canonical = node.toString("base64url") === s
    expect(got !== undefined).toBe(canonical)
    if (got !== undefined) {
      expect(Buffer.from(got)).toEqual(node)
      expect(toBase64Url(got)).toBe(s)
    }
  })

  it.prop("US-18 any bytes round-trip through toBase64Url and fromBase64Url", [fc.uint8Array({ maxLength: 300 })], ([bytes]) => {
    const s = toBase64Url(bytes)
    expect(s).toBe(Buffer.from(bytes).toString("base64url"))
    expect(fromBase64Url(s)).toEqual(bytes)
  })

  it("US-18 refused: a length of 4n+1, padding, the + and / of standard base64, stray low bits, anything outside the alphabet", () => {
    for (const bad of ["A", "AAAAA", "QQ==", "QQ=", "a+b/", "QR", "QUJ", "Q\u0000", "QÉ", " QQ", "Q Q"]) expect(fromBase64Url(bad), bad).toBeUndefined()
    expect(fromBase64Url("")).toEqual(new Uint8Array(0))
    expect(fromBase64Url("QQ")).toEqual(new Uint8Array([0x41]))
    expect(fromBase64Url("QUI")).toEqual(new Uint8Array([0x41, 0x42]))
    expect(fromBase64Url("QUE")).toEqual(new Uint8Array([0x41, 0x41]))
    expect(fromBase64Url("QUJD")).toEqual(new Uint8Array([0x41, 0x42, 0x43]))
  })

  it("US-18.1 the sender's ssh argv ends with the token, never the payload's lines; the token of every op is inert", () => {
    for (const p of [encodeShow("box:ses_1", { title: "x $(touch M)", message: "`id`; rm -rf ~", urgency: "critical", icon: "dialog-error", sound: "error" }), encodeClose("box:ses_1"), encodeProbe()]) {
      const argv = sshArgs("desk", p)
      expect(argv.slice(-3)).toEqual(["--", "desk", nodeToken(p)])
      expect(argv.at(-1)).toMatch(INERT)
    }
  })
})

describe("the hop token: reading (what ocpool receive makes of SSH_ORIGINAL_COMMAND)", () => {
  it("US-18 surrounding whitespace is trimmed; text without the prefix is not a token (the plain payload path)", () => {
    const t = encodeHopToken("ocpool-notify/1\nclose\nk:1")
    expect(readHopToken(` \n\t${t}\r\n `)).toEqual({ _tag: "Token", payload: "ocpool-notify/1\nclose\nk:1" })
    for (const other of ["ocpool-notify/1\nshow", "hello", "", "ocpool-notify-b64/2.QQ", "OCPOOL-NOTIFY-B64/1.QQ", "xocpool-notify-b64/1.QQ"]) expect(readHopToken(other)).toEqual({ _tag: "NotToken" })
  })

  it("US-18.5 hostile bytes: bytes that are not UTF-8 (a lone 0xff, a cut sequence, an overlong /, an encoded surrogate, past U+10FFFF) make a malformed token; NUL, CR, a BOM and controls decode as they are", () => {
    for (const bytes of [[0xff], [0xc3], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80], [0x41, 0xf0, 0x9f, 0x98]]) {
      expect(readHopToken(nodeToken(new Uint8Array(bytes))), String(bytes)).toEqual({ _tag: "Malformed", reason: "not UTF-8" })
    }
    const odd = "\ufeff\u0000a\rb\u001b[31m\u0007"
    expect(readHopToken(nodeToken(odd))).toEqual({ _tag: "Token", payload: odd })
    for (const bad of [`${HOP_TOKEN_PREFIX}QQ==`, `${HOP_TOKEN_PREFIX}Q`, `${HOP_TOKEN_PREFIX}QR`, `${HOP_TOKEN_PREFIX}Q$(id)`, `${HOP_TOKEN_PREFIX}QQ QQ`, `${HOP_TOKEN_PREFIX}QQ\nQQ`, `${HOP_TOKEN_PREFIX}a+b/`]) {
      expect(readHopToken(bad), bad).toEqual({ _tag: "Malformed", reason: "not base64url" })
    }
  })

  it("US-18 length limits: the largest token the sender can make is 5,482 characters; the receiver decodes up to 16,384 (then cuts the payload at 4,096 bytes) and refuses a longer one before decoding; both far below Linux's 128 KiB per argument", () => {
    expect(HOP_TOKEN_OF_MAX_PAYLOAD).toBe(5_482)
    expect(nodeToken("x".repeat(PAYLOAD_MAX_BYTES))).toHaveLength(HOP_TOKEN_OF_MAX_PAYLOAD)
    // the largest payload the encoder writes: every field at its cap in 4-byte characters, a 128-character key
    const biggest = encodeShow("k".repeat(128), { title: "😀".repeat(TITLE_MAX + 5), message: "😀".repeat(MESSAGE_MAX + 5), urgency: "critical", icon: "utilities-terminal", sound: "permission" })
    expect(Buffer.byteLength(biggest)).toBeLessThanOrEqual(PAYLOAD_MAX_BYTES)
    expect(encodeHopToken(biggest).length).toBeLessThanOrEqual(HOP_TOKEN_OF_MAX_PAYLOAD)
    expect(HOP_TOKEN_OF_MAX_PAYLOAD).toBeLessThan(HOP_TOKEN_MAX_BYTES)
    expect(HOP_TOKEN_MAX_BYTES).toBeLessThan(128 * 1024 / 4)
    // at the cap: decoded (12,273 bytes); one character more (padded to a valid length): refused
    const atCap = HOP_TOKEN_PREFIX + "Q".repeat(HOP_TOKEN_MAX_BYTES - HOP_TOKEN_PREFIX.length)
    expect(atCap).toHaveLength(HOP_TOKEN_MAX_BYTES)
    const read = readHopToken(` ${atCap}\n`)
    expect(read._tag).toBe("Token")
    expect(read._tag === "Token" ? Buffer.byteLength(read.payload) : 0).toBe(12_273)
    expect(readHopToken(`${atCap}QQ`)).toEqual({ _tag: "Malformed", reason: `longer than ${HOP_TOKEN_MAX_BYTES} bytes` })
    expect(readHopToken(HOP_TOKEN_PREFIX + "Q".repeat(200_000))._tag).toBe("Malformed")
  })

  it.prop(
    "US-18 the payload a token carries is read exactly as the same payload sent plain (whitelists, cleaning, the 4,096-byte cut), but for the size that arrived",
    [
      fc.oneof(
        texts,
        texts.map((t) => `${PAYLOAD_HEADER}\nshow\nk:1\n${t}`),
        fc.tuple(fc.constantFrom("show", "close", "probe", " PROBE ", "run"), texts, fc.integer({ min: 0, max: 6000 })).map(([op, t, n]) => `${PAYLOAD_HEADER}\n${op}\n\n${t}\n${"é".repeat(n)}\ncritical\nsystem-run\ndone`)
      )
    ],
    ([p]) => {
      const t = encodeHopToken(p)
      const plain = decodePayload(wellFormed(p))
      const viaToken = decodePayload(t)
      if (t.length > HOP_TOKEN_MAX_BYTES) {
        expect(viaToken).toEqual({ _tag: "Unrecognised", title: UNRECOGNISED_TITLE, message: `${t.slice(0, MESSAGE_MAX - 1)}…`, bytes: t.length })
        return
      }
      expect(viaToken).toEqual(plain._tag === "Unrecognised" ? { ...plain, bytes: t.length } : plain)
    }
  )

  it("US-18.5 a malformed token is shown as text (its own text, cleaned and capped), never read as fields; a token inside a token is not decoded twice", () => {
    const bad = `${HOP_TOKEN_PREFIX}QQ$(touch M)`
    expect(decodePayload(bad)).toEqual({ _tag: "Unrecognised", title: UNRECOGNISED_TITLE, message: bad, bytes: bad.length })
    const inner = encodeHopToken(encodeShow("", { title: "T", message: "M", urgency: "low", icon: "system-run", sound: "done" }))
    expect(decodePayload(encodeHopToken(inner))).toMatchObject({ _tag: "Unrecognised", message: inner })
    // a token of nothing but whitespace is an empty payload, as plain
    expect(decodePayload(encodeHopToken(" \n\t "))).toEqual({ _tag: "Empty" })
    expect(decodePayload(HOP_TOKEN_PREFIX)).toEqual({ _tag: "Empty" })
  })

  it("US-46 the probe op: lines 1–2 only, plain or as a token, any case and padding; an older receiver would read it as a bad op", () => {
    expect(encodeProbe()).toBe("ocpool-notify/1\nprobe")
    for (const p of [encodeProbe(), encodeHopToken(encodeProbe()), encodeHopToken(" ocpool-notify/1\r\n Probe \nignored\n$(touch M)")]) expect(decodePayload(p)).toEqual({ _tag: "Probe" })
    expect(decodePayload(encodeHopToken("probe"))._tag).toBe("Unrecognised")
  })
})

describe("the hop's answers (ocpool doctor --probe, the sender's failure reason)", () => {
  const token = encodeHopToken(encodeProbe())

  it("US-46 ocpool receive's probe answer with exit 0 is the forced command; the same line with another exit code, or without the line, is not", () => {
    expect(probeAnswer(0, `${PROBE_ANSWER}\n`)).toEqual({ _tag: "Receiver" })
    expect(probeAnswer(0, `Welcome!\r\n${PROBE_ANSWER}\r\n`)).toEqual({ _tag: "Receiver" })
    expect(probeAnswer(1, `${PROBE_ANSWER}\n`)).toEqual({ _tag: "NoAnswer" })
    expect(probeAnswer(0, "")).toEqual({ _tag: "NoAnswer" })
    expect(probeAnswer(null, "")).toEqual({ _tag: "NoAnswer" })
    expect(probeAnswer(255, "ssh: connect to host desk port 22: Connection refused\n")).toEqual({ _tag: "NoAnswer" })
    // a forced command whose program is missing: the shell names ocpool, not the token
    expect(probeAnswer(127, "bash: line 1: ocpool: command not found\n")).toEqual({ _tag: "NoAnswer" })
  })

  it("US-46 a shell's complaint naming the token (sh, bash, zsh, fish, tcsh) is a login shell, the token elided; an older receiver's `payload not understood` is told apart", () => {
    const says = [
      [`sh: 1: ${token}: not found`, "sh: 1: ocpool-notify-b64/1.…: not found"],
      [`bash: line 1: ${token}: No such file or directory`, "bash: line 1: ocpool-notify-b64/1.…: No such file or directory"],
      [`zsh:1: no such file or directory: ${token}`, "zsh:1: no such file or directory: ocpool-notify-b64/1.…"],
      [`fish: Unknown command: ${token}`, "fish: Unknown command: ocpool-notify-b64/1.…"],
      [`${token}: Command not found.`, "ocpool-notify-b64/1.…: Command not found."]
    ] as const
    for (const [stderr, line] of says) {
      expect(shellAnswer(`${stderr}\n`)).toBe(line)
      expect(probeAnswer(127, `${stderr}\n`)).toEqual({ _tag: "Shell", line })
      expect(probeAnswer(1, `${stderr}\n`)).toEqual({ _tag: "Shell", line })
    }
    expect(shellAnswer("ocpool receive: no notifier on linux: notify-send is not on PATH\n")).toBeUndefined()
    expect(probeAnswer(0, "ocpool receive: payload not understood (80 bytes); shown as text\n")).toEqual({ _tag: "OldReceiver" })
    expect(elideTokens(`a ${token} b ${token}`)).toBe("a ocpool-notify-b64/1.… b ocpool-notify-b64/1.…")
    // a very long line stays one bounded line
    expect(Array.from(shellAnswer(`${"x".repeat(500)} ${token}`)!)).toHaveLength(160)
  })

  it("US-18.1 a real /bin/sh given the token of a hostile payload runs nothing: it looks for a program at that path, says not found, exits 127", () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-hop-sh-"))
    const canary = join(dir, "CANARY")
    const p = encodeShow("", { title: `$(touch ${canary}) \`touch ${canary}\``, message: `; touch ${canary} && touch CANARY | touch CANARY`, urgency: "normal", icon: "system-run", sound: "none" })
    const t = encodeHopToken(p)
    const r = spawnSync("/bin/sh", ["-c", t], { cwd: dir, encoding: "utf8", env: { PATH: "/usr/bin:/bin" } })
    expect(r.status).toBe(127)
    expect(r.stdout).toBe("")
    expect(shellAnswer(r.stderr)).toMatch(/ocpool-notify-b64\/1\.…: (not found|No such file or directory|command not found)$/)
    expect(existsSync(canary)).toBe(false)
    expect(readdirSync(dir)).toEqual([])
  })
})
