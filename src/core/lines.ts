/**
 * Splits streamed text into lines with a bounded buffer (docs/OPERATIONS.md "Limits"). A line longer
 * than the cap is not accumulated: it comes out cut to `maxChars + 1` characters, so the reader can
 * name it as too long while memory stays bounded however long the line is. Pure.
 */
export class LineSplitter {
  private partial = ""
  private skipping = false

  constructor(private readonly maxChars: number) {}

  /** The lines `chunk` completes (without `\n` or a trailing `\r`). */
  push(chunk: string): Array<string> {
    const out: Array<string> = []
    let start = 0
    for (;;) {
      const nl = chunk.indexOf("\n", start)
      if (nl < 0) {
        this.append(chunk, start, chunk.length)
        return out
      }
      this.append(chunk, start, nl)
      out.push(this.take())
      start = nl + 1
    }
  }

  /** The last line when the text does not end with a newline. */
  end(): Array<string> {
    return this.partial === "" && !this.skipping ? [] : [this.take()]
  }

  private append(chunk: string, from: number, to: number): void {
    if (this.skipping || from === to) return
    const room = this.maxChars + 1 - this.partial.length
    if (to - from >= room) {
      this.partial += chunk.slice(from, from + room)
      this.skipping = true
    } else this.partial += chunk.slice(from, to)
  }

  private take(): string {
    const line = this.skipping ? this.partial : this.partial.endsWith("\r") ? this.partial.slice(0, -1) : this.partial
    this.partial = ""
    this.skipping = false
    return line
  }
}

