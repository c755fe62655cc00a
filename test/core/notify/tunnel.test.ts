import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { byteTextOf } from "../../../src/core/byteText.js"
import { authorizedKeysLine, beginMarker, DEFAULT_RECEIVER, endMarker, identityFileArg, receiverProblem, tunnelBlock, withTunnelBlock, type TunnelSpec } from "../../../src/core/notify/tunnel.js"
import { expectedTunnelBlock } from "../../support/tunnelBlock.js"

const SPEC: TunnelSpec = { host: "desk.lan", alias: "ocpool-desktop", identityFile: "~/.ssh/ocpool_notify" }
const BLOCK = expectedTunnelBlock("desk.lan")
const count = (text: string, needle: string) => text.split(needle).length - 1

describe("the tunnel block (SPEC §10.7)", () => {
  it("US-13 the block has exactly the lines of §10.7 between the markers", () => {
    expect(tunnelBlock(SPEC)).toEqual(BLOCK)
    expect(beginMarker("ocpool-desktop")).toBe("# >>> opencode-pool ocpool-desktop >>>")
    expect(endMarker("ocpool-desktop")).toBe("# <<< opencode-pool ocpool-desktop <<<")
  })

  it("US-13 User and Port appear only when given, right after HostName", () => {
    const b = tunnelBlock({ ...SPEC, host: "localhost", user: "me", port: 2222, alias: "desk" })
    expect(b.slice(0, 5)).toEqual(["# >>> opencode-pool desk >>>", "Host desk", "  HostName localhost", "  User me", "  Port 2222"])
    expect(b.slice(5)).toEqual(BLOCK.slice(3, -1).concat("# <<< opencode-pool desk <<<"))
    expect(tunnelBlock({ ...SPEC, user: "me" })).toContain("  User me")
    expect(tunnelBlock({ ...SPEC, user: "me" }).some((l) => l.includes("Port"))).toBe(false)
  })
})

describe("writing the block into ~/.ssh/config (SPEC §10.7)", () => {
  it("US-13 an empty config gets just the block", () => {
    expect(withTunnelBlock("", SPEC)).toBe(BLOCK.join("\n") + "\n")
  })

  it("US-13 an existing config is kept byte for byte and the block appended after a blank line", () => {
    const config = "Host github.com\n  User git\n  IdentityFile ~/.ssh/gh   # trailing spaces   \n"
    expect(withTunnelBlock(config, SPEC)).toBe(config + "\n" + BLOCK.join("\n") + "\n")
  })

  it("US-13 running twice gives exactly one marked block and the same text (idempotent)", () => {
    const config = "Host github.com\n  User git\n"
    const once = withTunnelBlock(config, SPEC)
    const twice = withTunnelBlock(once, SPEC)
    expect(twice).toBe(once)
    expect(count(twice, "# >>> opencode-pool ocpool-desktop >>>")).toBe(1)
    expect(count(twice, "Host ocpool-desktop")).toBe(1)
    expect(twice).toContain("  ControlMaster auto\n  ControlPath ~/.ssh/ocpool-%C\n  ControlPersist 10m")
  })

  it("US-13 an existing block is replaced in place, with the text before and after kept", () => {
    const before = "# mine\nHost a\n  HostName a.lan\n\n"
    const after = "\nHost b\n  HostName b.lan\n"
    const old = ["# >>> opencode-pool ocpool-desktop >>>", "Host ocpool-desktop", "  HostName old.lan", "# <<< opencode-pool ocpool-desktop <<<"].join("\n")
    const out = withTunnelBlock(before + old + "\n" + after, SPEC)
    expect(out).toBe(before + BLOCK.join("\n") + "\n" + after)
  })

  it("US-13 another alias's block is left alone", () => {
    const other = tunnelBlock({ ...SPEC, alias: "desk2", host: "other.lan" }).join("\n") + "\n"
    const out = withTunnelBlock(other, SPEC)
    expect(out.startsWith(other)).toBe(true)
    expect(withTunnelBlock(out, { ...SPEC, host: "new.lan" })).toBe(other + "\n" + tunnelBlock({ ...SPEC, host: "new.lan" }).join("\n") + "\n")
  })

  it("US-13 a CRLF config keeps CRLF, the block included", () => {
    const config = "Host a\r\n  HostName a.lan\r\n"
    const out = withTunnelBlock(config, SPEC)
    expect(out).toBe(config + "\r\n" + BLOCK.join("\r\n") + "\r\n")
    expect(out.replace(/\r\n/g, "")).not.toContain("\n")
    expect(withTunnelBlock(out, SPEC)).toBe(out)
  })

  it("US-13 a config without a final newline keeps its text; the block follows on its own lines", () => {
    expect(withTunnelBlock("Host a", SPEC)).toBe("Host a\n\n" + BLOCK.join("\n") + "\n")
    const inMiddle = "Host a\n" + BLOCK.join("\n") + "\nHost b"
    expect(withTunnelBlock(inMiddle, SPEC)).toBe(inMiddle)
  })

  it("US-13 an unterminated begin marker is kept as text, and applying again neither grows nor eats the user's lines", () => {
    const config = "# >>> opencode-pool ocpool-desktop >>>\nHost mine\n  HostName mine.lan\n"
    const once = withTunnelBlock(config, SPEC)
    expect(once).toBe(config + "\n" + BLOCK.join("\n") + "\n")
    expect(withTunnelBlock(once, SPEC)).toBe(once)
  })

  it.prop(
    "US-13 for any config of ordinary lines: applying twice equals applying once, one block, other lines kept in order",
    [fc.array(fc.constantFrom("Host a", "  HostName a.lan", "", "# c", "Host *", "  User x", "\tPort 22", "Match all"), { maxLength: 12 }), fc.boolean(), fc.boolean()],
    ([lines, crlf, finalEol]) => {
      const eol = crlf ? "\r\n" : "\n"
      const config = lines.join(eol) + (finalEol && lines.length > 0 ? eol : "")
      const once = withTunnelBlock(config, SPEC)
      expect(withTunnelBlock(once, SPEC)).toBe(once)
      expect(count(once, beginMarker(SPEC.alias))).toBe(1)
      expect(once.startsWith(config)).toBe(true)
    }
  )
})

describe("the block on the bytes of ~/.ssh/config (SPEC §10.7)", () => {
  const bytes = (eol: string, spec: TunnelSpec = SPEC) => tunnelBlock(spec).join(eol)

  it("US-13 every byte outside the block is kept: a BOM, bytes that are not UTF-8, each line's own ending, no final newline; the block takes the dominant ending", () => {
    const config = "\xef\xbb\xbfHost a\r\n  IdentityFile ~/.ssh/cl\xe9\r\n  HostName a\n\r\nHost b"
    expect(withTunnelBlock(config, SPEC)).toBe(config + "\r\n\r\n" + bytes("\r\n") + "\r\n")
    const mostlyLf = "a\r\nb\nc\n"
    expect(withTunnelBlock(mostlyLf, SPEC)).toBe(mostlyLf + "\n" + bytes("\n") + "\n")
    // a tie: the last line's ending
    expect(withTunnelBlock("a\nb\r\n", SPEC)).toBe("a\nb\r\n\r\n" + bytes("\r\n") + "\r\n")
    // a BOM alone is an empty file that keeps its BOM
    expect(withTunnelBlock("\xef\xbb\xbf", SPEC)).toBe("\xef\xbb\xbf" + bytes("\n") + "\n")
  })

  it("US-13 a replaced block keeps its begin marker's line ending and the end marker's own ending (or none); the bytes around stay", () => {
    const before = "\xef\xbb\xbfHost \xff\r\n"
    const old = ["# >>> opencode-pool ocpool-desktop >>>", "Host ocpool-desktop", "  HostName old.lan", "# <<< opencode-pool ocpool-desktop <<<"]
    for (const [eol, after] of [["\n", "\r\nHost z\n"], ["\r\n", "\nHost z"], ["\n", ""]] as const) {
      const out = withTunnelBlock(before + old.join(eol) + after, SPEC)
      expect(out).toBe(before + bytes(eol) + after)
      expect(withTunnelBlock(out, SPEC)).toBe(out)
    }
    // a BOM right before the begin marker stays
    expect(withTunnelBlock("\xef\xbb\xbf" + old.join("\n") + "\n", SPEC)).toBe("\xef\xbb\xbf" + bytes("\n") + "\n")
    // a second block of the same alias goes, with its line ending
    expect(withTunnelBlock(old.join("\n") + "\nx\n" + old.join("\r\n") + "\r\ny", SPEC)).toBe(bytes("\n") + "\nx\ny")
  })

  it("US-13 a non-ASCII key path goes in as UTF-8 bytes; HostName doubles '%' (an IPv6 zone is not a token)", () => {
    const spec = { ...SPEC, host: "fe80::1%eth0", identityFile: "/k/clé" }
    const out = withTunnelBlock("", spec)
    expect(out).toContain("  IdentityFile /k/cl\xc3\xa9\n")
    expect(out).toContain("  HostName fe80::1%%eth0\n")
    expect(byteTextOf("é😀")).toBe("\xc3\xa9\xf0\x9f\x98\x80")
  })
})

describe("the IdentityFile argument (SPEC §10.7)", () => {
  it("US-13 quoted when it holds whitespace, ', # or =, '%' doubled; refused with '${', a double quote, or a backslash OpenSSH before and after 8.7 read differently", () => {
    const arg = (p: string) => {
      const a = identityFileArg(p)
      return a._tag === "Arg" ? a.text : undefined
    }
    expect(arg("~/.ssh/ocpool_notify")).toBe("~/.ssh/ocpool_notify")
    expect(arg("/k/a b")).toBe('"/k/a b"')
    expect(arg("/k/k'y")).toBe(`"/k/k'y"`)
    expect(arg("/k/#k")).toBe('"/k/#k"')
    expect(arg("/k/k=y")).toBe('"/k/k=y"')
    expect(arg("/k/k%y%%")).toBe("/k/k%%y%%%%")
    expect(arg("/k/a b%")).toBe('"/k/a b%%"')
    expect(arg("/k/ky\\")).toBe("/k/ky\\")
    expect(arg("/k/a\\b$c")).toBe("/k/a\\b$c")
    for (const p of ["/k/${HOME}", '/k/a"b', "/k/a b\\", "/k/a'\\b", "/k/a\\\\b"]) expect(identityFileArg(p)._tag, p).toBe("Unwritable")
  })
})

describe("the authorized_keys line (SPEC §10.7)", () => {
  it("US-13 it starts with `command=\"ocpool receive\",no-pty,no-port-forwarding` and ends with the public key", () => {
    const line = authorizedKeysLine(DEFAULT_RECEIVER, "ssh-ed25519 AAAAC3Nza ocpool-notify@box\n")
    expect(line.startsWith('command="ocpool receive",no-pty,no-port-forwarding')).toBe(true)
    expect(line).toBe('command="ocpool receive",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc ssh-ed25519 AAAAC3Nza ocpool-notify@box')
  })

  it("US-13 inside the command only a quote is escaped: sshd knows no other escape and keeps every other backslash", () => {
    expect(authorizedKeysLine('/opt/x "y"\\z receive', "k")).toBe('command="/opt/x \\"y\\"\\z receive",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc k')
    expect(authorizedKeysLine('a\\"b', "k").startsWith('command="a\\\\"b",')).toBe(true)
    expect(receiverProblem("ocpool receive\\")).toMatch(/^cannot end with a backslash/)
    expect(receiverProblem("ocpool\\ receive")).toBeUndefined()
  })
})
