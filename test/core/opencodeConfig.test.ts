/**
 * The plugin entry spliced into opencode's config (core/opencodeConfig.ts, core/jsoncEdit.ts; US-15):
 * the exact bytes of each layout people write, what counts as this plugin's entry, and the refusals.
 */
import { describe, expect, it } from "@effect/vitest"
import { addPluginEntry, isOurName, pluginListing, removePluginEntry } from "../../src/core/opencodeConfig.js"
import { byteTextOf, utf8Of } from "../../src/core/byteText.js"
import { applySplices, lineColumnOf, parseTopLevel } from "../../src/core/jsoncEdit.js"

const ours = (name: string) => name === "opencode-pool"
const add = (text: string) => addPluginEntry(text, "opencode-pool", ours)
const remove = (text: string) => removePluginEntry(text, ours)
const textOf = (e: ReturnType<typeof add>) => (e._tag === "Changed" ? e.text : e._tag)

describe("the plugin entry, spliced (core/opencodeConfig.ts)", () => {
  it.each([
    ["{}", '{\n  "plugin": ["opencode-pool"]\n}'],
    ['{"a":1}', '{"a":1,"plugin":["opencode-pool"]}'],
    ['{ "a": 1 }', '{ "a": 1, "plugin": ["opencode-pool"] }'],
    ['{"a":1,}', '{"a":1,"plugin":["opencode-pool"],}'],
    ['{\n  "a": 1, // note\n}\n', '{\n  "a": 1, // note\n  "plugin": ["opencode-pool"],\n}\n'],
    ['{\n  "a": 1 // note\n}\n', '{\n  "a": 1, // note\n  "plugin": ["opencode-pool"]\n}\n'],
    ['{\n\t"plugin": [\n\t\t"x",\n\t],\n}\n', '{\n\t"plugin": [\n\t\t"x",\n\t\t"opencode-pool",\n\t],\n}\n'],
    ['{\r\n  "plugin": [\r\n    "x"\r\n  ]\r\n}\r\n', '{\r\n  "plugin": [\r\n    "x",\r\n    "opencode-pool"\r\n  ]\r\n}\r\n'],
    ['{"plugin":[]}', '{"plugin":["opencode-pool"]}'],
    ['{"plugin":["x","y"]}', '{"plugin":["x","y","opencode-pool"]}'],
    ['{ "plugin": [ "x" ] }', '{ "plugin": [ "x", "opencode-pool" ] }'],
    ['{\n  "plugin": [\n  ]\n}', '{\n  "plugin": [\n    "opencode-pool"\n  ]\n}'],
    ["// only a comment\n", '// only a comment\n{\n  "$schema": "https://opencode.ai/config.json",\n  "plugin": [\n    "opencode-pool"\n  ]\n}\n']
  ])("US-15 %j gets the entry as %j, and loses it again byte for byte where the layout allows", (before, after) => {
    expect(textOf(add(before))).toBe(after)
    expect(textOf(add(after))).toBe("Unchanged")
    const back = textOf(remove(after))
    // a list that held only the entry goes whole (an emptied object keeps its own lines); a file that was only comments keeps the new config
    if (!["{}", "// only a comment\n", '{"plugin":[]}', '{\n  "plugin": [\n  ]\n}'].includes(before)) expect(back).toBe(before)
    else expect(textOf(remove(after))).not.toContain("opencode-pool")
  })

  it.each([
    ['{"a":1,"plugin":["opencode-pool"],"b":2}', '{"a":1,"b":2}'],
    ['{\n  "a": 1,\n  "plugin": ["opencode-pool", "x"],\n  "b": 2\n}', '{\n  "a": 1,\n  "plugin": ["x"],\n  "b": 2\n}'],
    ['{\n  "plugin": [\n    "opencode-pool", // ours\n    "x",\n    ["opencode-pool@1", {"a": 1}]\n  ]\n}', '{\n  "plugin": [\n    "x"\n  ]\n}'],
    ['{"plugin":["x","opencode-pool","y","opencode-pool",]}', '{"plugin":["x","y",]}'],
    ['{"plugin":[["opencode-pool",{"maxSlots":2}]]}', "{}"]
  ])("US-15 --remove takes every entry of this plugin out of %j", (before, after) => {
    const all = (n: string) => isOurName(n)
    const r = removePluginEntry(before, all)
    expect(textOf(r)).toBe(after)
  })

  it("US-15 an entry is ours by the test the shell gives; the pure part knows only the package name", () => {
    for (const yes of ["opencode-pool", "opencode-pool@0.1.0", "opencode-pool@latest", " opencode-pool "]) expect(isOurName(yes), yes).toBe(true)
    for (const no of ["@someone/opencode-pool", "opencode-pool-extras", "opencode-pool@", "file:///x/opencode-pool/dist/opencode-plugin.js", "/opt/opencode-pool", "opencode-pool@1/x"]) expect(isOurName(no), no).toBe(false)
    expect(pluginListing('{"plugin": ["a", ["opencode-pool", {}], "file:///x/dist/opencode-plugin.js"]}')).toEqual({ _tag: "Listed", entries: ["opencode-pool"] })
    // opencode reads the last of two keys, and so does the listing
    expect(pluginListing('{"plugin": ["opencode-pool"], "plugin": []}')).toEqual({ _tag: "NotListed" })
    // the object element of a list is not named by a string inside it
    expect(textOf(addPluginEntry('{"plugin":[{"name":"opencode-pool"}]}', "opencode-pool", ours))).toBe('{"plugin":[{"name":"opencode-pool"},"opencode-pool"]}')
  })

  it("US-15 an entry of ours that loads another installation is replaced in place (a pair keeps its options), further ones are taken out; with this installation's listed, only those go (issue 33)", () => {
    const mine = (n: string) => n.startsWith("file:///")
    const other = (n: string) => n.startsWith("file:///old")
    const edit = (text: string) => addPluginEntry(byteTextOf(text), "file:///new/é.js", mine, other)
    const one = edit('{\n  "plugin": [\n    "x",\n    ["file:///old/a.js", { "maxSlots": 2 }], // old\n  ],\n}')
    expect(one).toEqual({ _tag: "Changed", text: byteTextOf('{\n  "plugin": [\n    "x",\n    ["file:///new/é.js", { "maxSlots": 2 }], // old\n  ],\n}'), replaced: "file:///old/a.js", dropped: [] })
    const two = edit('{ "plugin": ["file:///old/a.js", "x", "file:///old/b.js"] }')
    expect(two._tag === "Changed" && utf8Of(two.text)).toBe('{ "plugin": ["file:///new/é.js", "x"] }')
    expect(two).toMatchObject({ replaced: "file:///old/a.js", dropped: ["file:///old/b.js"] })
    const here = edit('{ "plugin": ["file:///old/a.js", "file:///here.js"] }')
    expect(here._tag === "Changed" && utf8Of(here.text)).toBe('{ "plugin": ["file:///here.js"] }')
    expect(here).toMatchObject({ replaced: undefined, dropped: ["file:///old/a.js"] })
    expect(edit('{ "plugin": ["file:///here.js"] }')).toEqual({ _tag: "Unchanged", reason: "already listed" })
    // without the test for other installations, nothing is replaced (as before)
    expect(addPluginEntry('{ "plugin": ["file:///old/a.js"] }', "file:///new.js", mine)._tag).toBe("Unchanged")
  })

  it("US-15 refusals name the place: a second plugin key, a plugin that is not a list, a top level that is not an object, too deep, not JSONC", () => {
    expect(add('{"plugin":[],\n "plugin":[]}')).toEqual({ _tag: "Invalid", line: 2, column: 2, reason: 'a second "plugin" key (the first is at line 1); opencode reads only the last one: merge them by hand', syntax: false })
    expect(add('{ "plugin": "x" }')).toEqual({ _tag: "Invalid", line: 1, column: 13, reason: '"plugin" is not an array', syntax: false })
    expect(add("[1]")).toMatchObject({ _tag: "Invalid", line: 1, column: 1, reason: "the top level is not an object" })
    expect(add(`{"a":${"[".repeat(300)}${"]".repeat(300)}}`)).toMatchObject({ _tag: "Invalid", line: 1, column: 261, reason: "nested deeper than 256 levels" })
    expect(add('{\n  "a": }')).toMatchObject({ _tag: "Invalid", line: 2, column: 8, syntax: true })
    expect(remove('{"plugin":[],"plugin":["opencode-pool"]}')._tag).toBe("Invalid")
  })

  it("US-15 offsets are bytes and columns are characters: a BOM is kept and not counted, UTF-8 and Latin-1 bytes pass through", () => {
    const bom = "\xef\xbb\xbf"
    const text = `${bom}{"t":"${byteTextOf("é")}\xe9"}`
    const added = add(text)
    expect(textOf(added)).toBe(`${bom}{"t":"${byteTextOf("é")}\xe9","plugin":["opencode-pool"]}`)
    expect(add(`${bom}{"a":${byteTextOf("é")}}`)).toMatchObject({ line: 1, column: 6 })
    expect(lineColumnOf(`${bom}ab`, 5)).toEqual({ line: 1, column: 3 })
    expect(utf8Of(byteTextOf("café ☕"))).toBe("café ☕")
    const entry = byteTextOf('"opencode-pool@é"')
    expect(textOf(addPluginEntry(`{"plugin":[${entry}]}`, "opencode-pool", (n) => n === "opencode-pool@é"))).toBe("Unchanged")
  })

  it("US-15 the top level is read in one pass: properties, the array under the key, [name, options] elements", () => {
    const text = '{"a": {"plugin": ["no"]}, "plugin": ["x", ["y", {}], [1, "z"], {"n": "w"}], "b": []}'
    const parsed = parseTopLevel(text, "plugin")
    if (parsed._tag !== "Ok") throw new Error("not parsed")
    expect(parsed.top.root?.properties.map((p) => p.key)).toEqual(["a", "plugin", "b"])
    expect(parsed.top.arrays).toHaveLength(1)
    expect(parsed.top.arrays[0]!.elements.map((e) => e.name)).toEqual(["x", "y", undefined, undefined])
    expect(parsed.top.arrays[0]!.elements.map((e) => text.slice(e.offset, e.offset + e.length))).toEqual(['"x"', '["y", {}]', '[1, "z"]', '{"n": "w"}'])
    expect(applySplices("abcdef", [{ start: 4, end: 5, insert: "X" }, { start: 1, end: 1, insert: "Y" }])).toBe("aYbcdXf")
  })
})
