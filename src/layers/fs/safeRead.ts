/**
 * The one way input files are read (docs/OPERATIONS.md "Limits"): pool files, state files, traces and
 * decisions files. A path is opened without blocking (a FIFO swapped in never stalls the reader), must
 * be a regular file once symbolic links are followed, and is read only up to a size cap. Every refusal
 * is a one-line reason; nothing here throws.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from "node:fs"
import { StringDecoder } from "node:string_decoder"
import { LineSplitter } from "../../core/lines.js"

export type SafeRead =
  | { readonly _tag: "Text"; readonly text: string; readonly stat: Stats }
  /** Nothing at the path, not even a symbolic link. */
  | { readonly _tag: "Missing" }
  /** `tooLarge`: a regular file over the cap, its content unusable (anything else is not a file to read). */
  | { readonly _tag: "Refused"; readonly reason: string; readonly tooLarge?: boolean }

export type SafeOpen = { readonly _tag: "Open"; readonly fd: number; readonly stat: Stats } | Exclude<SafeRead, { _tag: "Text" }>

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0)

/** `1 MiB`, `256 KiB`, `512 bytes`. */
export const sizeText = (bytes: number): string =>
  bytes >= 1 << 20 && bytes % (1 << 20) === 0 ? `${bytes / (1 << 20)} MiB` : bytes >= 1024 && bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`

const kindOf = (st: Stats): string =>
  st.isDirectory() ? "a directory" : st.isFIFO() ? "a FIFO" : st.isCharacterDevice() ? "a character device" : st.isBlockDevice() ? "a block device" : st.isSocket() ? "a socket" : "not a file"

/** Whether anything (a file, a directory, a link even if dangling or looping) is at `path`. */
export const occupied = (path: string): boolean => {
  try {
    lstatSync(path)
    return true
  } catch {
    return false
  }
}

/** Why a path could not be opened, as words; `Missing` only when nothing at all is there. */
const openFailure = (path: string, e: unknown): Exclude<SafeOpen, { _tag: "Open" }> => {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  switch (code) {
    case "ENOENT":
      return occupied(path) ? { _tag: "Refused", reason: "a dangling symbolic link" } : { _tag: "Missing" }
    case "ELOOP":
      return { _tag: "Refused", reason: "a symbolic link loop (too many symbolic links)" }
    case "EACCES":
    case "EPERM":
      return { _tag: "Refused", reason: "permission denied" }
    case "ENOTDIR":
      return { _tag: "Refused", reason: "a component of the path is not a directory" }
    case "ENAMETOOLONG":
      return { _tag: "Refused", reason: "the path is too long" }
    case "ENXIO":
      return { _tag: "Refused", reason: "not a regular file (a socket or device)" }
    default:
      return { _tag: "Refused", reason: code ?? String(e) }
  }
}

const quietClose = (fd: number): void => {
  try {
    closeSync(fd)
  } catch {
    // already closed
  }
}

/** Opens a regular file for reading without blocking; the caller closes `fd`. */
export const openRegular = (path: string): SafeOpen => {
  let fd: number
  try {
    fd = openSync(path, OPEN_FLAGS)
  } catch (e) {
    return openFailure(path, e)
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) {
      quietClose(fd)
      return { _tag: "Refused", reason: `not a regular file (${kindOf(stat)})` }
    }
    return { _tag: "Open", fd, stat }
  } catch (e) {
    quietClose(fd)
    return { _tag: "Refused", reason: (e as NodeJS.ErrnoException).code ?? String(e) }
  }
}

const CHUNK = 64 << 10

export type SafeBytes =
  | { readonly _tag: "Bytes"; readonly bytes: Buffer; readonly stat: Stats }
  | Exclude<SafeRead, { _tag: "Text" }>

/**
 * A regular file's bytes, exactly as they are (no decoding, a byte-order mark kept), or why not. A
 * file larger than `maxBytes`, or one that grows past it while being read, is refused without reading
 * the rest. For files that are edited in place and must keep every byte outside the edit.
 */
export const readBytesFile = (path: string, maxBytes: number): SafeBytes => {
  const opened = openRegular(path)
  if (opened._tag !== "Open") return opened
  const { fd, stat } = opened
  const tooLarge: SafeBytes = { _tag: "Refused", reason: `larger than ${sizeText(maxBytes)}`, tooLarge: true }
  try {
    if (stat.size > maxBytes) return tooLarge
    // sized from fstat; grown (up to the cap) only if the file grows while it is read
    let buf = Buffer.allocUnsafe(Math.min(maxBytes, stat.size) + 1)
    let total = 0
    for (;;) {
      if (total === buf.length) {
        if (total > maxBytes) return tooLarge
        const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, buf.length * 2 + CHUNK))
        buf.copy(bigger, 0, 0, total)
        buf = bigger
      }
      const n = readSync(fd, buf, total, buf.length - total, null)
      if (n === 0) break
      total += n
    }
    if (total > maxBytes) return tooLarge
    return { _tag: "Bytes", bytes: buf.subarray(0, total), stat }
  } catch (e) {
    return { _tag: "Refused", reason: (e as NodeJS.ErrnoException).code ?? String(e) }
  } finally {
    quietClose(fd)
  }
}

/**
 * A regular file's text (UTF-8, a leading byte-order mark dropped), or why not. A file larger than
 * `maxBytes`, or one that grows past it while being read, is refused without reading the rest.
 */
export const readTextFile = (path: string, maxBytes: number): SafeRead => {
  const read = readBytesFile(path, maxBytes)
  if (read._tag !== "Bytes") return read
  const text = read.bytes.toString("utf8")
  return { _tag: "Text", text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, stat: read.stat }
}

export interface LineReader {
  /** The next line (cut to `maxChars + 1` characters when it is longer), or `undefined` at the end. */
  readonly next: () => string | undefined
  /** Why reading stopped early (an I/O error), once `next` has returned `undefined`. */
  readonly failure: () => string | undefined
  readonly close: () => void
}

/**
 * A regular file read line by line, synchronously, in 64 KiB chunks: memory stays bounded by the
 * line cap whatever the file's size. A leading byte-order mark is dropped.
 */
export const lineReader = (path: string, maxChars: number): LineReader | Exclude<SafeRead, { _tag: "Text" }> => {
  const opened = openRegular(path)
  if (opened._tag !== "Open") return opened
  const fd = opened.fd
  const splitter = new LineSplitter(maxChars)
  const decoder = new StringDecoder("utf8")
  const buf = Buffer.allocUnsafe(CHUNK)
  const ready: Array<string> = []
  let first = true
  let done = false
  let closed = false
  const close = () => {
    if (!closed) quietClose(fd)
    closed = true
  }
  let failure: string | undefined
  const fill = (): void => {
    while (ready.length === 0 && !done) {
      let n: number
      try {
        n = closed ? 0 : readSync(fd, buf, 0, CHUNK, null)
      } catch (e) {
        failure = (e as NodeJS.ErrnoException).code ?? String(e)
        n = 0
      }
      if (n === 0) {
        done = true
        for (const line of splitter.push(decoder.end())) ready.push(line)
        for (const line of splitter.end()) ready.push(line)
        close()
        break
      }
      let text = decoder.write(buf.subarray(0, n))
      if (first && text.length > 0) {
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
        first = false
      }
      for (const line of splitter.push(text)) ready.push(line)
    }
  }
  return {
    next: () => {
      fill()
      return ready.shift()
    },
    failure: () => failure,
    close
  }
}
