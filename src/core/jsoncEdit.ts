/**
 * Editing JSONC text in place, one splice at a time: every byte outside the edited spans is kept
 * (comments, trailing commas, indentation, each line's own ending, bytes that are not UTF-8). The text
 * is a byte string (byteText.ts: one character per byte): offsets are byte
 * offsets and JSON's structure is ASCII, so no decoding can change a byte. Every function here is
 * linear in the text's length (jsonc-parser's `modify` reformats the edited line, which on a
 * one-line file is quadratic). Pure.
 */
import { createScanner, printParseErrorCode, visit } from "jsonc-parser"
import { BOM, utf8Of, type ByteText } from "./byteText.js"

/** jsonc-parser's `SyntaxKind` values (a const enum, which this build cannot import). */
const TOKEN = { OpenBrace: 1, CloseBrace: 2, OpenBracket: 3, CloseBracket: 4, EOF: 17 } as const

/** Replace `[start, end)` with `insert` (a byte string). */
export interface Splice {
  readonly start: number
  readonly end: number
  readonly insert: ByteText
}

/** Applies disjoint splices (any order) in one pass. */
export const applySplices = (text: ByteText, splices: ReadonlyArray<Splice>): ByteText => {
  const sorted = [...splices].sort((a, b) => a.start - b.start || a.end - b.end)
  const parts: Array<string> = []
  let at = 0
  for (const s of sorted) {
    parts.push(text.slice(at, s.start), s.insert)
    at = Math.max(at, s.end)
  }
  parts.push(text.slice(at))
  return parts.join("")
}

/** 1-based line and column (in characters, as an editor shows them; a leading BOM not counted) of a byte offset. */
export const lineColumnOf = (text: ByteText, offset: number): { readonly line: number; readonly column: number } => {
  const at = Math.max(0, Math.min(offset, text.length))
  let line = 1
  let start = 0
  for (let i = text.indexOf("\n"); i >= 0 && i < at; i = text.indexOf("\n", i + 1)) {
    line++
    start = i + 1
  }
  if (line === 1 && text.startsWith(BOM)) start = Math.min(BOM.length, at)
  return { line, column: Array.from(utf8Of(text.slice(start, at))).length + 1 }
}

/** The deepest nesting of objects and arrays read (jsonc-parser's visitor recurses once a level). */
export const JSONC_MAX_DEPTH = 256

/** A stretch of the text: an item of a list (an object's property, key to value; an array's element). */
export interface Span {
  readonly offset: number
  readonly length: number
}

/** An object or array: its brackets (`offset` is the opening one, `length` reaches the closing one) and its items. */
export interface List extends Span {
  readonly items: ReadonlyArray<Span>
  /** The top-level value (an empty one opens onto lines of its own when an item is added). */
  readonly top: boolean
}

export interface Property extends Span {
  /** The key, escapes resolved (as a byte string). */
  readonly key: ByteText
  /** Where the key's closing quote ends. */
  readonly keyEnd: number
  readonly value: Span & { readonly kind: "object" | "array" | "literal" }
}

/** An element of the array that was asked for: its span and, when it is a string or a list opening with one, that string. */
export interface Element extends Span {
  readonly name: ByteText | undefined
  /** Where that string is written (the whole element, or the first value of a list). */
  readonly nameSpan?: Span | undefined
}

export interface TopLevel {
  /** The top-level object: its list of properties; `undefined` when the text holds only white space and comments. */
  readonly root: (List & { readonly properties: ReadonlyArray<Property> }) | undefined
  /** Each top-level property named `arrayKey` whose value is an array, with that array's elements. */
  readonly arrays: ReadonlyArray<{ readonly property: Property; readonly list: List; readonly elements: ReadonlyArray<Element> }>
}

export type Parsed =
  | { readonly _tag: "Ok"; readonly top: TopLevel }
  /** `syntax`: a JSONC syntax error (else: nested too deep, or a top level that is not an object). */
  | { readonly _tag: "Invalid"; readonly offset: number; readonly reason: string; readonly syntax: boolean }

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true }

/** Where the nesting of objects and arrays first goes deeper than `max` (a linear scan, no recursion). */
export const tooDeepAt = (text: ByteText, max: number = JSONC_MAX_DEPTH): number | undefined => {
  const scanner = createScanner(text, true)
  let depth = 0
  for (let kind = scanner.scan(); kind !== TOKEN.EOF; kind = scanner.scan()) {
    if (kind === TOKEN.OpenBrace || kind === TOKEN.OpenBracket) {
      if (++depth > max) return scanner.getTokenOffset()
    } else if (kind === TOKEN.CloseBrace || kind === TOKEN.CloseBracket) depth = Math.max(0, depth - 1)
  }
  return undefined
}

interface OpenList {
  readonly kind: "object" | "array"
  readonly offset: number
  readonly items: Array<Span>
  /** Where the item being read started. */
  itemStart: number
}

/**
 * The top level of a JSONC text, and the elements of the arrays under `arrayKey`, in one pass of
 * jsonc-parser's visitor (no tree is built: a 1 MiB one-line file takes a fraction of a second), or
 * where and why it is not an editable JSONC object. Nesting deeper than `maxDepth` is refused first,
 * by a linear scan, so no input can overflow the stack.
 */
export const parseTopLevel = (text: ByteText, arrayKey: string, maxDepth: number = JSONC_MAX_DEPTH): Parsed => {
  const deep = tooDeepAt(text, maxDepth)
  if (deep !== undefined) return { _tag: "Invalid", offset: deep, reason: `nested deeper than ${maxDepth} levels`, syntax: false }
  let error: { offset: number; reason: string } | undefined
  let notObject: number | undefined
  const stack: Array<OpenList> = []
  const properties: Array<Property> = []
  let root: (List & { properties: ReadonlyArray<Property> }) | undefined
  const arrays: Array<{ property: Property; list: List; elements: Array<Element> }> = []
  let key: { key: ByteText; offset: number; keyEnd: number } | undefined
  /** The array under `arrayKey` being read, and the element being read inside it. */
  let current: { list: OpenList; elements: Array<Element>; keyInfo: { key: ByteText; offset: number; keyEnd: number } } | undefined
  let element: { offset: number; name: ByteText | undefined; nameSpan: Span | undefined; first: boolean } | undefined

  const valueStart = (offset: number, kind: "object" | "array" | "literal", literal?: unknown, length = 0) => {
    const depth = stack.length
    if (depth === 0 && notObject === undefined && root === undefined) notObject = offset
    if (current === undefined || stack[1] !== current.list) return
    if (depth === 2) element = { offset, name: undefined, nameSpan: undefined, first: kind === "array" }
    else if (depth === 3 && element?.first === true) {
      // the first value of a list element (`[name, options]`) names it when it is a string
      element.first = false
      if (kind === "literal" && typeof literal === "string") {
        element.name = literal
        element.nameSpan = { offset, length }
      }
    }
  }
  const valueEnd = (kind: "object" | "array" | "literal", start: number, end: number, literal?: unknown) => {
    const depth = stack.length
    if (depth === 1 && key !== undefined && stack[0]!.kind === "object") {
      const property: Property = { key: key.key, keyEnd: key.keyEnd, offset: key.offset, length: end - key.offset, value: { kind, offset: start, length: end - start } }
      properties.push(property)
      stack[0]!.items.push(property)
      key = undefined
    } else if (current !== undefined && depth === 2 && stack[1] === current.list && element !== undefined) {
      const own = kind === "literal" && typeof literal === "string"
      const name = own ? literal : element.name
      const span = { offset: element.offset, length: end - element.offset, name, nameSpan: own ? { offset: element.offset, length: end - element.offset } : element.nameSpan }
      current.elements.push(span)
      current.list.items.push(span)
      element = undefined
    }
  }
  const open = (kind: "object" | "array", offset: number) => {
    valueStart(offset, kind)
    const list: OpenList = { kind, offset, items: [], itemStart: offset }
    if (kind === "array" && stack.length === 1 && key !== undefined && key.key === arrayKey) current = { list, elements: [], keyInfo: key }
    stack.push(list)
  }
  const close = (offset: number, length: number) => {
    const list = stack.pop()
    if (list === undefined) return
    const span = { offset: list.offset, length: offset + length - list.offset }
    if (stack.length === 0 && list.kind === "object" && root === undefined && notObject === list.offset) {
      notObject = undefined
      root = { ...span, items: list.items, top: true, properties }
      return
    }
    if (current !== undefined && list === current.list) {
      const keyInfo = current.keyInfo
      const property: Property = { key: keyInfo.key, keyEnd: keyInfo.keyEnd, offset: keyInfo.offset, length: offset + length - keyInfo.offset, value: { kind: "array", ...span } }
      arrays.push({ property, list: { ...span, items: list.items, top: false }, elements: current.elements })
      current = undefined
    }
    valueEnd(list.kind, list.offset, offset + length)
  }
  visit(
    text,
    {
      onObjectBegin: (offset) => open("object", offset),
      onObjectEnd: (offset, length) => close(offset, length),
      onArrayBegin: (offset) => open("array", offset),
      onArrayEnd: (offset, length) => close(offset, length),
      onObjectProperty: (property, offset, length) => {
        if (stack.length === 1) key = { key: property, offset, keyEnd: offset + length }
      },
      onLiteralValue: (value, offset, length) => {
        valueStart(offset, "literal", value, length)
        valueEnd("literal", offset, offset + length, value)
      },
      onError: (code, offset) => {
        error ??= { offset, reason: printParseErrorCode(code) }
      }
    },
    PARSE_OPTIONS
  )
  if (error !== undefined) return { _tag: "Invalid", offset: error.offset, reason: error.reason, syntax: true }
  if (notObject !== undefined) return { _tag: "Invalid", offset: notObject, reason: "the top level is not an object", syntax: false }
  // the property whose value is the array: the one recorded in `properties` is the same stretch
  return { _tag: "Ok", top: { root, arrays: arrays.map((a) => ({ ...a, property: properties.find((p) => p.offset === a.property.offset) ?? a.property })) } }
}

const isSpace = (c: string | undefined): boolean => c === " " || c === "\t"

/** The offset of the first character after `from` that is not white space, a line break or a comment. */
const skipTrivia = (text: ByteText, from: number): number => {
  let i = from
  for (;;) {
    const c = text[i]
    if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v") i++
    else if (c === "/" && text[i + 1] === "/") {
      const nl = text.indexOf("\n", i)
      i = nl < 0 ? text.length : nl
    } else if (c === "/" && text[i + 1] === "*") {
      const close = text.indexOf("*/", i + 2)
      i = close < 0 ? text.length : close + 2
    } else return i
  }
}

/** Where the line holding `at` starts. */
const lineStart = (text: ByteText, at: number): number => text.lastIndexOf("\n", at - 1) + 1

/** Whether only spaces and tabs stand before `at` on its line. */
const startsLine = (text: ByteText, at: number): boolean => {
  for (let i = at - 1; i >= 0 && text[i] !== "\n"; i--) if (!isSpace(text[i])) return false
  return true
}

/**
 * When only spaces, tabs and comments follow `from` up to the end of its line: where that line's
 * break starts (`eolAt`) and where the next line starts (`next`); `undefined` when anything else does.
 */
const restOfLine = (text: ByteText, from: number): { readonly eolAt: number; readonly next: number } | undefined => {
  let i = from
  for (;;) {
    const c = text[i]
    if (isSpace(c)) i++
    else if (c === "/" && text[i + 1] === "/") {
      const nl = text.indexOf("\n", i)
      if (nl < 0) return { eolAt: text.length, next: text.length }
      return { eolAt: text[nl - 1] === "\r" ? nl - 1 : nl, next: nl + 1 }
    } else if (c === "/" && text[i + 1] === "*") {
      const close = text.indexOf("*/", i + 2)
      if (close < 0 || text.slice(i, close).includes("\n")) return undefined
      i = close + 2
    } else if (c === "\r" && text[i + 1] === "\n") return { eolAt: i, next: i + 2 }
    else if (c === "\n") return { eolAt: i, next: i + 1 }
    else if (c === undefined) return { eolAt: i, next: i }
    else return undefined
  }
}

/** The line ending of the line holding `at` (the next break after it, else the last before it, else `\n`). */
export const eolNear = (text: ByteText, at: number): string => {
  const next = text.indexOf("\n", at)
  if (next >= 0) return text[next - 1] === "\r" ? "\r\n" : "\n"
  const prev = text.lastIndexOf("\n", at - 1)
  return prev > 0 && text[prev - 1] === "\r" ? "\r\n" : "\n"
}

/** The indentation unit the file uses (its first indented line), two spaces when it has none. */
export const indentUnit = (text: ByteText): string => {
  const m = /\n([ \t]+)\S/.exec(text)
  return m?.[1]?.startsWith("\t") ? "\t" : (m?.[1] ?? "  ")
}

/** The spaces and tabs that open the line holding `at`. */
const indentOf = (text: ByteText, at: number): string => /^[ \t]*/.exec(text.slice(lineStart(text, at), at))![0]

/** The offset of the comma after item `node` when one follows it (before the next item or the close). */
const commaAfter = (text: ByteText, node: Span): number => {
  const i = skipTrivia(text, node.offset + node.length)
  return text[i] === "," ? i : -1
}

/** The splices that append `item` (a byte string: a value, or `"key": value` for an object) to `container`. */
export const appendItem = (text: ByteText, container: List, item: ByteText): ReadonlyArray<Splice> => {
  const children = container.items
  const open = container.offset
  const close = container.offset + container.length - 1
  if (children.length === 0) {
    const inner = text.slice(open + 1, close)
    const eol = eolNear(text, open)
    if (inner.includes("\n")) return [{ start: open + 1, end: open + 1, insert: `${eol}${indentOf(text, open)}${indentUnit(text)}${item}` }]
    // an empty top-level object opens onto lines of its own; an empty list takes the item in place
    if (container.top) return [{ start: open + 1, end: open + 1, insert: `${eol}${indentUnit(text)}${item}${inner === "" ? eol : ""}` }]
    return [{ start: open + 1, end: open + 1, insert: item }]
  }
  const last = children[children.length - 1]!
  const end = last.offset + last.length
  const trailing = commaAfter(text, last)
  if (startsLine(text, last.offset)) {
    const indent = indentOf(text, last.offset)
    if (trailing >= 0) {
      const rest = restOfLine(text, trailing + 1)
      const at = rest?.eolAt ?? trailing + 1
      return [{ start: at, end: at, insert: `${eolNear(text, trailing)}${indent}${item},` }]
    }
    const rest = restOfLine(text, end)
    const eol = eolNear(text, end)
    if (rest === undefined) return [{ start: end, end, insert: `,${eol}${indent}${item}` }]
    return [
      { start: end, end, insert: "," },
      { start: rest.eolAt, end: rest.eolAt, insert: `${eol}${indent}${item}` }
    ]
  }
  // one line: the separator the items already use
  // (with one item: the space after the opening bracket, `[ "a" ]` against `["a"]`)
  const before = children.length >= 2 ? commaAfter(text, children[children.length - 2]!) : open
  const between = before >= 0 ? text.slice(before + 1, last.offset) : " "
  const sep = /^[ \t]*$/.test(between) ? between : " "
  if (trailing >= 0) return [{ start: trailing + 1, end: trailing + 1, insert: `${sep}${item},` }]
  return [{ start: end, end, insert: `,${sep}${item}` }]
}

/**
 * The splices that take the items at `remove` out of `container`. Items that each sit on lines of their own go with their lines; otherwise
 * each goes with its comma, and a removed last item takes the comma before it, so a trailing comma
 * stays as it was.
 */
export const removeItems = (text: ByteText, container: List, remove: ReadonlySet<number>): ReadonlyArray<Splice> => {
  const children = container.items
  const kept = children.flatMap((_, i) => (remove.has(i) ? [] : [i]))
  if (remove.size === 0) return []
  const lastKept = kept[kept.length - 1]
  const lastIndex = children.length - 1
  const lines = [...remove].map((i) => {
    const node = children[i]!
    const comma = commaAfter(text, node)
    const rest = restOfLine(text, comma >= 0 ? comma + 1 : node.offset + node.length)
    return startsLine(text, node.offset) && rest !== undefined ? { start: lineStart(text, node.offset), end: rest.next } : undefined
  })
  if (lines.every((l) => l !== undefined)) {
    const splices: Array<Splice> = lines.map((l) => ({ ...l!, insert: "" }))
    if (lastKept === undefined) return splices
    const keptComma = commaAfter(text, children[lastKept]!)
    // the last item goes and had no trailing comma: the new last item loses its comma
    if (remove.has(lastIndex) && commaAfter(text, children[lastIndex]!) < 0 && keptComma >= 0) splices.push({ start: keptComma, end: keptComma + 1, insert: "" })
    return splices
  }
  if (lastKept === undefined) {
    // all of them: from the first to the last, its trailing comma included
    const last = children[lastIndex]!
    const comma = commaAfter(text, last)
    return [{ start: children[0]!.offset, end: comma >= 0 ? comma + 1 : last.offset + last.length, insert: "" }]
  }
  const splices: Array<Splice> = []
  for (const i of remove) if (i < lastKept) splices.push({ start: children[i]!.offset, end: children[i + 1]!.offset, insert: "" })
  if (remove.has(lastIndex)) {
    const k = children[lastKept]!
    const l = children[lastIndex]!
    splices.push({ start: k.offset + k.length, end: l.offset + l.length, insert: "" })
  }
  return splices
}

/** The text between a property's key and its value (`": "`), when it is only a colon and spaces. */
export const colonOf = (text: ByteText, property: Property | undefined): string => {
  if (property === undefined) return ": "
  const between = text.slice(property.keyEnd, property.value.offset)
  return /^[ \t]*:[ \t]*$/.test(between) ? between : ": "
}
