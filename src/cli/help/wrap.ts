/**
 * Help text wrapped to a width (issue 33): each line longer than the width is broken at spaces, its
 * continuation lines indented to the line's hanging column. A rendered help line marks that column
 * with a TAB (`  --pool FILE\tthe pool file`: continuations start under "the"); a line without one
 * hangs at its own indentation. No dependency: the start-up fast path prints pre-rendered help with it.
 */

/** The width help is wrapped to: the terminal's, else $COLUMNS, else 80; never under 40 nor over 100. */
export const helpWidth = (columns: number | undefined, env: Readonly<Record<string, string | undefined>>): number => {
  const fromEnv = Number.parseInt(env["COLUMNS"] ?? "", 10)
  const given = columns !== undefined && columns > 0 ? columns : Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : 80
  return Math.max(40, Math.min(100, given))
}

/** The visible width of help text: code points (help is ASCII and a few symbols), styling excluded. */
// eslint-disable-next-line no-control-regex
const widthOf = (s: string): number => [...s.replace(/\u001b\[[0-9;]*m/g, "")].length

/** The words of a line, a bracketed group (`[--trace FILE]`) kept as one. */
const words = (body: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let depth = 0
  for (const w of body.split(" ")) {
    if (depth > 0) out[out.length - 1] += ` ${w}`
    else out.push(w)
    depth = Math.max(0, depth + (w.match(/\[/g)?.length ?? 0) - (w.match(/\]/g)?.length ?? 0))
  }
  return out
}

const wrapLine = (line: string, width: number): ReadonlyArray<string> => {
  const tab = line.indexOf("\t")
  const head = tab < 0 ? "" : line.slice(0, tab)
  const body = tab < 0 ? line : line.slice(tab + 1)
  const hang = tab < 0 ? (/^ */.exec(line)?.[0].length ?? 0) : widthOf(head)
  const out: Array<string> = []
  let current = head
  let currentWidth = widthOf(head)
  let lineHasWord = false
  // a group wider than the room after the hang is broken after all
  for (const word of words(body).flatMap((w) => (widthOf(w) > width - hang ? w.split(" ") : [w]))) {
    if (word === "" && !lineHasWord) {
      // leading spaces of an untabbed line are its indentation
      current += " "
      currentWidth += 1
      continue
    }
    const w = widthOf(word)
    if (lineHasWord && currentWidth + 1 + w > width) {
      out.push(current)
      current = " ".repeat(hang) + word
      currentWidth = hang + w
    } else {
      current += (lineHasWord ? " " : "") + word
      currentWidth += (lineHasWord ? 1 : 0) + w
    }
    lineHasWord = true
  }
  out.push(current.replace(/ +$/, ""))
  return out
}

/** `text` with every line wrapped to `width` and the hanging-column marks removed. */
export const wrapHelp = (text: string, width: number): string =>
  text
    .split("\n")
    .flatMap((line) => wrapLine(line, width))
    .join("\n")
