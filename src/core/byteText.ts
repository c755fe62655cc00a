/**
 * Byte strings: a file's bytes held as a string of one character per byte (code 0–255, as Node's
 * `latin1` decoding gives). Files that are edited in place (opencode's config, `~/.ssh/config`) are
 * handled this way, so offsets are byte offsets and no decoding can change a byte outside an edit.
 * Pure.
 */

/** A byte string: each character is one byte of the file (code 0–255). */
export type ByteText = string

/** A UTF-8 byte-order mark, as a byte string. */
export const BOM: ByteText = "\xef\xbb\xbf"

/** The UTF-8 bytes of `s` as a byte string. */
export const byteTextOf = (s: string): ByteText => {
  const bytes = new TextEncoder().encode(s)
  let out = ""
  for (let i = 0; i < bytes.length; i += 0x8000) out += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return out
}

const UTF8 = new TextDecoder("utf-8", { fatal: false })

/** A byte string read as UTF-8 (bytes that are not UTF-8 become U+FFFD: for display and matching only). */
export const utf8Of = (b: ByteText): string => {
  // ASCII reads the same either way
  if (!/[^\x00-\x7f]/.test(b)) return b
  const bytes = new Uint8Array(b.length)
  for (let i = 0; i < b.length; i++) bytes[i] = b.charCodeAt(i) & 0xff
  return UTF8.decode(bytes)
}
