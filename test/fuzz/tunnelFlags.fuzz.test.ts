/**
 * Fuzz family: `ocpool tunnel setup`'s flags and the config it edits (SPEC §10.7; US-13). Random flag
 * values (key paths with every character ssh_config, `%`/`${}` expansion and authorized_keys treat
 * specially, hosts with IPv6 zones, users, ports, aliases, receivers with quotes and backslashes, and
 * hostile strings) go through `checkFlags`, in process. Each case is either refused (BadInput or
 * UsageProblem, exit 2, with one line naming the flag) or gives a block whose values OpenSSH reads back
 * exactly, and an authorized_keys line whose forced command is exactly the receiver.
 *
 * The expectation is an oracle independent of the code under test: models of OpenSSH's parsers
 * (test/support/sshOracle.ts, transcribed from openssh-portable: `argv_split` since 8.7 and `strdelim`
 * before it must both give the one intended argument; `~`, `${}` and `%` expansion must give the key's
 * path; sshd's option parsing must give the receiver). Every case also splices its block into random
 * config bytes (random bytes, or lines with mixed endings, a BOM, Latin-1 bytes, unterminated markers,
 * no final newline): the bytes before are kept exactly, a second run changes nothing, and a later run
 * with another host replaces only the block, the bytes after it kept exactly.
 *
 * The real OpenSSH client checks a sample, REAL_EVERY-th accepted case (an `ssh -v` costs about 0.1 s):
 * `ssh -G` must print exactly the intended hostname, user, port and IdentityFile, `ssh -v` (through a
 * ProxyCommand that exits at once) must load exactly the key's path, and `ssh-keygen -lf` must accept
 * the authorized_keys line.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir, userInfo } from "node:os"
import { join, resolve } from "node:path"
import { checkFlags, type TunnelFlags } from "../../src/cli/tunnel.js"
import { DESKTOP_ALIAS } from "../../src/core/notify/channel.js"
import { byteTextOf } from "../../src/core/byteText.js"
import { authorizedKeysLine, beginMarker, DEFAULT_RECEIVER, endMarker, tunnelBlock, withTunnelBlock, type TunnelSpec } from "../../src/core/notify/tunnel.js"
import {
  argvSplit,
  authorizedKeysCommand,
  keygenAccepts,
  percentDollarExpand,
  requireOpenSsh,
  sshG,
  sshHome,
  sshHostNames,
  sshIdentityPaths,
  stripTrailing,
  strdelimOneArg,
  tildeExpand
} from "../support/sshOracle.js"
import { FUZZ_RUNS, fuzzParams, fuzzTimeout, hostileString } from "./common.js"

/** ssh's own home: `~` in the block must expand to where the key is. */
const HOME = sshHome()
const CWD = "/work/dir with space"
/** A real ed25519 public key (its private half thrown away). */
const PUBLIC = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIICJi7N++bpjzNADgFkeNoLWWsELfCCqM3z2belf9/u2 ocpool-notify@box"
/** One accepted case in this many is read by the real ssh too. */
const REAL_EVERY = 50

const dir = mkdtempSync(join(tmpdir(), "ocpool-fuzz-tunnel-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// ---- arbitraries ------------------------------------------------------------------------------

/** Every character that means something to ssh_config, its expansions, authorized_keys, a shell or a terminal. */
const awkward = fc.constantFrom(
  "'", '"', "\\", " ", "%", "$", "{", "}", "${", "#", "=", "~", ",", "*", "?", "!", "`", ";", "&", "|", "<", ">", "(", ")",
  "é", "ключ", "中", "😀", "\u00a0", "\u2028", "\ufeff", "\t", "\n", "\r", "\u0000", "\u001b", "\u007f", "\u0085", "\ufffd", "\ud800", "\udc00",
  "/", ".", "..", "-", "_", "key", "a", "Z", "0", "%d", "%%", "%h", "${HOME}", "\\\\", "\\ ", "\\'", '\\"'
)
const word = (max: number) => fc.array(fc.oneof({ weight: 3, arbitrary: awkward }, { weight: 1, arbitrary: fc.string({ maxLength: 4 }) }), { maxLength: max }).map((a) => a.join(""))
const pathTail = fc.array(word(4), { minLength: 1, maxLength: 4 }).map((a) => a.join("/"))

const keyFlag: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: pathTail.map((t) => `/tmp/${t}`) },
  { weight: 2, arbitrary: pathTail.map((t) => `~/${t}`) },
  { weight: 2, arbitrary: pathTail },
  { weight: 1, arbitrary: fc.constantFrom("", "~", "~/", "/", ".", "..", "~user/k", "/k/", "-k", " /k") },
  { weight: 1, arbitrary: hostileString }
)

const hostChars = fc.constantFrom(..."abcxyzABC019.-_:%".split(""))
const hostFlag: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.tuple(fc.constantFrom(..."abzAZ09_:%.".split("")), fc.array(hostChars, { maxLength: 20 })).map(([h, t]) => h + t.join("")) },
  { weight: 3, arbitrary: fc.constantFrom("desk.lan", "10.0.0.7", "::1", "fe80::1%eth0", "fe80::1%%eth0", "%", "localhost", " desk.lan ", "-x", "a b", "a\nProxyCommand x") },
  { weight: 1, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constant(undefined) }
)

const userChars = fc.constantFrom(..."abzAZ09._@$-".split(""))
const userFlag: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom(..."abAZ09._".split("")), fc.array(userChars, { maxLength: 12 })).map(([h, t]) => h + t.join("")) },
  { weight: 1, arbitrary: fc.constantFrom("me", "me@corp", "a$b", " me ", "", "${USER}", "%u", "a b", "-me") },
  { weight: 1, arbitrary: hostileString }
)

const portFlag: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: fc.integer({ min: -2, max: 70_000 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom(" 22 ", "0022", "22x", "1e3", "0x16", "", "65535", "65536") },
  { weight: 1, arbitrary: hostileString }
)

const aliasChars = fc.constantFrom(..."abyzAZ09._-".split(""))
const aliasFlag: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 8, arbitrary: fc.array(aliasChars, { minLength: 1, maxLength: 66 }).map((a) => a.join("")) },
  { weight: 1, arbitrary: fc.constantFrom("-x", "-oProxyCommand", ".", "..", "a b", "*", "a,b", "x".repeat(64), "x".repeat(65)) },
  { weight: 1, arbitrary: hostileString }
)

const receiverFlag: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 8, arbitrary: fc.array(fc.oneof(awkward, fc.constantFrom("ocpool", "receive", "/opt/bin/", " ")), { maxLength: 8 }).map((a) => a.join("")) },
  { weight: 1, arbitrary: hostileString }
)

/** Printable awkward characters only: paths and commands a user may really have. */
const printableWord = word(6).map((w) => w.replace(/[\u0000-\u001f\u007f-\u009f\ufffd\ud800-\udfff]/g, ""))

/** Every flag random; or (half the cases) only the key and the receiver awkward, the rest plain, so that most keys reach the block. */
const flags: fc.Arbitrary<TunnelFlags> = fc.oneof(
  fc.record({ host: hostFlag, user: userFlag, port: portFlag, alias: aliasFlag, key: keyFlag, receiver: receiverFlag, print: fc.boolean() }),
  fc.record({
    host: fc.constantFrom("desk.lan", "10.0.0.7", "fe80::1%eth0", "localhost", "Desk.LAN"),
    user: fc.constantFrom(undefined, "me", "me@corp", "a$b"),
    port: fc.constantFrom(undefined, "22", "2222"),
    alias: fc.constantFrom(undefined, "desk", "my.desk_2"),
    key: fc.oneof(
      fc.array(printableWord, { minLength: 1, maxLength: 3 }).map((a) => `/tmp/${a.join("/")}`),
      fc.array(printableWord, { minLength: 1, maxLength: 3 }).map((a) => `~/${a.join("/")}`),
      keyFlag
    ),
    receiver: fc.oneof(fc.constant(undefined), printableWord.map((w) => `ocpool receive ${w}`), receiverFlag),
    print: fc.boolean()
  })
)

const bytes = (a: Uint8Array): string => Buffer.from(a).toString("latin1")

/** Config lines a user has, with their own endings: Latin-1 and UTF-8 bytes, markers of this and other aliases, comments. */
const configLine = (alias: string) =>
  fc.tuple(
    fc.oneof(
      fc.constantFrom("Host other", "  HostName o.lan", "  IdentityFile ~/.ssh/cl\xe9", "  User \xff\xfe", "# caf\xc3\xa9", "", "   ", "\t", "Match all", "Host *"),
      fc.constantFrom(endMarker("other"), beginMarker("other"), `  ${beginMarker(alias)}  `, `# >>> opencode-pool ${alias}`),
      fc.uint8Array({ maxLength: 12 }).map(bytes).filter((l) => !l.includes("\n"))
    ),
    fc.constantFrom("\n", "\r\n", "\r\r\n", "")
  )

/**
 * Bytes around the block: random bytes, or lines. Never a complete marked block of the alias (that one
 * would be replaced, not kept), so at most an unterminated begin marker.
 */
const around = (alias: string, bom: boolean) =>
  fc
    .oneof(
      fc.uint8Array({ maxLength: 120 }).map(bytes),
      fc.array(configLine(alias), { maxLength: 10 }).map((ls) => ls.map(([l, e]) => l + e).join(""))
    )
    .map((b) => (bom ? `\xef\xbb\xbf${b}` : b))
    .filter((b) => !b.split("\n").some((l) => l.replace(/^[ \t\f\v\r]+|[ \t\f\v\r]+$/g, "") === endMarker(alias)))

/** The flags, and config bytes before and after the block (the alias's markers only as an unterminated begin). */
const withSurroundings = flags.chain((f) => {
  const alias = f.alias ?? DESKTOP_ALIAS
  return fc.record({
    f: fc.constant(f),
    prefix: fc.boolean().chain((bom) => around(alias, bom)),
    suffix: fc.oneof(fc.constant(""), around(alias, false))
  })
})

// ---- the oracle -------------------------------------------------------------------------------

/** What the flags mean, independent of `checkFlags`: the trimmed values and the key's absolute path. */
const intended = (f: TunnelFlags) => ({
  host: (f.host ?? "").trim(),
  user: f.user?.trim() === "" ? undefined : f.user?.trim(),
  port: f.port === undefined ? undefined : Number(f.port.trim()),
  alias: f.alias ?? DESKTOP_ALIAS,
  receiver: (f.receiver ?? DEFAULT_RECEIVER).trim(),
  keyPath: f.key === undefined ? `${HOME}/.ssh/ocpool_notify` : f.key === "~" ? HOME : f.key.startsWith("~/") ? resolve(join(HOME, f.key.slice(2))) : resolve(CWD, f.key)
})

/** The one argument of `keyword` in the block, as OpenSSH 8.7+ and OpenSSH before 8.7 read it: both must agree. */
const argOf = (block: ReadonlyArray<string>, keyword: string): string | undefined => {
  const line = block.find((l) => l.trimStart().split(/[ \t]/)[0] === keyword)
  if (line === undefined) return undefined
  const rest = stripTrailing(line).trimStart().slice(keyword.length).replace(/^[ \t]+/, "")
  const modern = argvSplit(rest)
  expect(modern, `${keyword}: argv_split of ${JSON.stringify(rest)}`).toHaveLength(1)
  expect(strdelimOneArg(rest), `${keyword}: strdelim of ${JSON.stringify(rest)}`).toBe(modern![0])
  return modern![0]
}

/** `ssh -G`'s user when the block names none. */
const LOCAL_USER = userInfo().username

let accepted = 0
let refused = 0
let real = 0

describe("fuzz: ocpool tunnel setup flags and the config bytes (US-13)", () => {
  it("US-13 random flags: refused with one line naming the flag (exit 2), or a block every OpenSSH reads back exactly, an authorized_keys line sshd reads back exactly, and config bytes kept around the block", { timeout: fuzzTimeout(30) }, () => {
    requireOpenSsh()
    fc.assert(
      fc.property(withSurroundings, ({ f, prefix, suffix }) => {
        const result = Effect.runSync(Effect.either(checkFlags(f, HOME, CWD)))
        if (Either.isLeft(result)) {
          refused++
          const e = result.left
          expect(["BadInput", "UsageProblem"]).toContain(e._tag)
          expect(e.message).not.toMatch(/[\n\r\u2028\u2029]/)
          expect(e.message).toMatch(e._tag === "UsageProblem" ? /^tunnel setup needs --host H / : /^(--(host|user|port|alias|receiver|key) |no default key path)/)
          if (e._tag === "UsageProblem") expect(f.host).toBeUndefined()
          return
        }
        accepted++
        const c = result.right
        const want = intended(f)
        const spec: TunnelSpec = c.spec
        expect(spec.host).toBe(want.host)
        expect(spec.alias).toBe(want.alias)
        expect(c.keyPath).toBe(want.keyPath)

        // every line of the block is one line, and every value comes back exactly
        const block = tunnelBlock(spec)
        for (const l of block) expect(l).not.toMatch(/[\n\r\u0000]/)
        expect(argOf(block, "Host")).toBe(want.alias)
        expect(percentDollarExpand(argOf(block, "HostName")!, { h: want.alias }, {}, false)).toBe(want.host)
        expect(argOf(block, "User")).toBe(want.user)
        expect(argOf(block, "Port")).toBe(want.port === undefined ? undefined : String(want.port))
        const identity = argOf(block, "IdentityFile")!
        const tilded = tildeExpand(identity, HOME)
        expect(tilded, identity).toBeDefined()
        // no `%` token and no variable is known here: a `%x` or `${X}` left in the path fails the expansion
        expect(percentDollarExpand(tilded!, {}, {}, true), identity).toBe(want.keyPath)

        // the authorized_keys line: the forced command is the receiver, then every restriction, then the key
        const line = authorizedKeysLine(c.receiver, PUBLIC)
        expect(authorizedKeysCommand(line)).toEqual({ command: want.receiver, options: ",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc", key: PUBLIC })

        // the block in random config bytes: the bytes before are kept, a second run changes nothing
        const once = withTunnelBlock(prefix, spec)
        expect(once.startsWith(prefix)).toBe(true)
        const eol = once.endsWith("\r\n") ? "\r\n" : "\n"
        const ours = byteTextOf(block.join(eol)) + eol
        expect(once.endsWith(ours)).toBe(true)
        expect(withTunnelBlock(once, spec)).toBe(once)
        // text after the block, and a run with another host: only the block changes
        const other: TunnelSpec = { ...spec, host: "other.lan" }
        const later = withTunnelBlock(once + suffix, other)
        expect(later).toBe(once.slice(0, once.length - ours.length) + byteTextOf(tunnelBlock(other).join(eol)) + eol + suffix)

        if (accepted % REAL_EVERY === 1) {
          real++
          checkWithRealSsh(spec, want, c.receiver)
        }
      }),
      fuzzParams()
    )
    // the family must exercise both outcomes, and the real client
    expect(accepted).toBeGreaterThan(FUZZ_RUNS / 10)
    expect(refused).toBeGreaterThan(FUZZ_RUNS / 10)
    expect(real).toBeGreaterThan(0)
  })
})

/** A config as users have them around the block (Latin-1 bytes, mixed endings, no final newline), read by the real ssh. */
const REAL_PREFIX = "Host other\r\n  IdentityFile ~/.ssh/cl\xe9\nHost b\r\n  HostName b.lan"

const checkWithRealSsh = (spec: TunnelSpec, want: ReturnType<typeof intended>, receiver: string): void => {
  // a prefix host with the alias's name would answer first
  if (["other", "b"].includes(want.alias.toLowerCase())) return
  const file = join(dir, `config-${real}`)
  writeFileSync(file, Buffer.from(withTunnelBlock(REAL_PREFIX, spec), "latin1"))
  const view = sshG(file, want.alias)
  const what = `${file}: ${JSON.stringify(spec)}`
  expect(view.stderr, what).toBe("")
  expect(view.code, what).toBe(0)
  expect(sshHostNames(want.host), what).toContain(view.values.get("hostname"))
  expect(view.values.get("user"), what).toBe(want.user ?? LOCAL_USER)
  expect(view.values.get("port"), what).toBe(String(want.port ?? 22))
  expect(view.identityFiles, what).toEqual([argvSplit(spec.identityFile)![0]])
  expect(sshIdentityPaths(file, want.alias).paths, what).toEqual([want.keyPath])
  expect(keygenAccepts(authorizedKeysLine(receiver, PUBLIC)).ok, receiver).toBe(true)
}
