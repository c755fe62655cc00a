/** How `ocpool` runs from where the user is (core/invocation.ts, issue 33): the hints' command line and the MCP entry. */
import { describe, expect, it } from "@effect/vitest"
import { commandLine, invocationOf, isInside, mcpServerOf, notOnPathNote, PATH_SERVER, shellWord, type InvocationFacts } from "../../src/core/invocation.js"

const FACTS: InvocationFacts = {
  onPath: undefined,
  root: "/home/me/src/opencode-pool",
  bin: "/home/me/src/opencode-pool/bin/ocpool.js",
  cwd: "/home/me/proj",
  binRunnable: true,
  nodeOnPath: true,
  node: "/opt/node-20/bin/node"
}

const line = (f: Partial<InvocationFacts>, args = "doctor") => commandLine(invocationOf({ ...FACTS, ...f }), args)

describe("how ocpool runs from here", () => {
  it("US-15 PATH finds this installation: ocpool; inside the checkout: npx ocpool; elsewhere: the bin by its absolute path, behind the Node binary when it cannot start by itself", () => {
    expect(line({ onPath: FACTS.bin })).toBe("ocpool doctor")
    expect(line({ onPath: FACTS.bin, cwd: FACTS.root })).toBe("ocpool doctor")
    expect(line({ cwd: FACTS.root })).toBe("npx ocpool doctor")
    expect(line({ cwd: `${FACTS.root}/test/cli` }, "init --global")).toBe("npx ocpool init --global")
    // another installation on PATH is not this one
    expect(line({ onPath: "/usr/lib/node_modules/opencode-pool/bin/ocpool.js" })).toBe("/home/me/src/opencode-pool/bin/ocpool.js doctor")
    expect(line({ onPath: "/usr/lib/node_modules/opencode-pool/bin/ocpool.js", cwd: FACTS.root })).toBe("npx ocpool doctor")
    expect(line({})).toBe("/home/me/src/opencode-pool/bin/ocpool.js doctor")
    expect(line({ binRunnable: false })).toBe("node /home/me/src/opencode-pool/bin/ocpool.js doctor")
    expect(line({ binRunnable: false, nodeOnPath: false })).toBe("/opt/node-20/bin/node /home/me/src/opencode-pool/bin/ocpool.js doctor")
    // a folder of the checkout with a package.json of its own (bin/, .e2e-cache/…): npx would look there, then in the registry
    expect(line({ cwd: `${FACTS.root}/bin`, project: `${FACTS.root}/bin` })).toBe("/home/me/src/opencode-pool/bin/ocpool.js doctor")
    expect(line({ cwd: `${FACTS.root}/test/cli`, project: FACTS.root })).toBe("npx ocpool doctor")
    // a sibling directory whose name starts like the root's is outside it
    expect(line({ cwd: `${FACTS.root}-old` })).toBe("/home/me/src/opencode-pool/bin/ocpool.js doctor")
  })

  it("US-15 a path the shell would split or expand is quoted", () => {
    expect(shellWord("/a/b-c_d.js")).toBe("/a/b-c_d.js")
    expect(shellWord("/My Apps/it's/ocpool.js")).toBe(`'/My Apps/it'\\''s/ocpool.js'`)
    expect(shellWord("/a/$HOME")).toBe("'/a/$HOME'")
    expect(line({ bin: "/My Apps/bin/ocpool.js", root: "/My Apps" })).toBe("'/My Apps/bin/ocpool.js' doctor")
    expect(isInside("/a/b", "/a")).toBe(true)
    expect(isInside("/a", "/a")).toBe(true)
    expect(isInside("/ab", "/a")).toBe(false)
    expect(isInside("/", "/a")).toBe(false)
  })

  it("US-51 the MCP entry is ocpool mcp only when PATH finds this installation, else the running Node binary with the absolute bin, and the note says why", () => {
    expect(mcpServerOf({ ...FACTS, onPath: FACTS.bin })).toEqual(PATH_SERVER)
    expect(notOnPathNote({ ...FACTS, onPath: FACTS.bin })).toBeUndefined()
    // inside the checkout too: a harness starts the server from a directory of its own
    expect(mcpServerOf({ ...FACTS, cwd: FACTS.root })).toEqual({ command: "/opt/node-20/bin/node", args: [FACTS.bin, "mcp"] })
    expect(notOnPathNote(FACTS)).toBe(
      "ocpool is not on PATH, so the entry runs this installation by its absolute path; to put its ocpool on PATH: cd /home/me/src/opencode-pool && npm link (then run this again for the short entry)"
    )
    expect(notOnPathNote({ ...FACTS, onPath: "/usr/lib/node_modules/opencode-pool/bin/ocpool.js" })).toMatch(/^the ocpool on PATH \(\/usr\/lib\/node_modules\/opencode-pool\/bin\/ocpool\.js\) is another installation, so /)
  })
})
