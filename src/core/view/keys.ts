/**
 * The live view's keys (issue 24): raw terminal input to what it asks for, and the view's scroll and
 * help state after it. Pure: the shell reads the bytes and draws.
 */

export type KeyAction = "quit" | "up" | "down" | "pageUp" | "pageDown" | "top" | "bottom" | "help"

export interface ViewUi {
  readonly scroll: number
  readonly help: boolean
}

export const INITIAL_UI: ViewUi = { scroll: 0, help: false }

const KEYS: ReadonlyArray<readonly [string, KeyAction]> = [
  ["\x1b[A", "up"],
  ["\x1bOA", "up"],
  ["\x1b[B", "down"],
  ["\x1bOB", "down"],
  ["\x1b[5~", "pageUp"],
  ["\x1b[6~", "pageDown"],
  ["\x1b[H", "top"],
  ["\x1b[F", "bottom"],
  ["\x1bOH", "top"],
  ["\x1bOF", "bottom"],
  ["\x1b[1~", "top"],
  ["\x1b[4~", "bottom"],
  ["\x03", "quit"],
  ["\x04", "quit"],
  ["q", "quit"],
  ["Q", "quit"],
  ["k", "up"],
  ["j", "down"],
  ["g", "top"],
  ["G", "bottom"],
  [" ", "pageDown"],
  ["?", "help"],
  ["h", "help"]
]

/** Every action in a chunk of input, in order (several keys may arrive in one read); unknown bytes are skipped. */
export const keyActions = (input: string): ReadonlyArray<KeyAction> => {
  const out: Array<KeyAction> = []
  let i = 0
  while (i < input.length) {
    const hit = KEYS.find(([seq]) => input.startsWith(seq, i))
    if (hit !== undefined) {
      out.push(hit[1])
      i += hit[0].length
    } else if (input[i] === "\x1b") {
      // an escape sequence this view has no use for (a function key, a mouse report): skip it whole
      const m = /^\x1b(\[[0-9;?]*[ -/]*[@-~]|O.|.)?/.exec(input.slice(i))
      i += Math.max(1, m?.[0].length ?? 1)
    } else i++
  }
  return out
}

/** The state after `action` (`quit` is the shell's), scroll kept within [0, maxScroll]; a key other than `?` closes the help. */
export const applyKey = (ui: ViewUi, action: KeyAction, maxScroll: number, page: number): ViewUi => {
  const clamp = (n: number) => Math.max(0, Math.min(maxScroll, n))
  if (action === "help") return { ...ui, help: !ui.help }
  if (ui.help && action !== "quit") return { ...ui, help: false }
  switch (action) {
    case "up":
      return { ...ui, scroll: clamp(ui.scroll - 1) }
    case "down":
      return { ...ui, scroll: clamp(ui.scroll + 1) }
    case "pageUp":
      return { ...ui, scroll: clamp(ui.scroll - Math.max(1, page)) }
    case "pageDown":
      return { ...ui, scroll: clamp(ui.scroll + Math.max(1, page)) }
    case "top":
      return { ...ui, scroll: 0 }
    case "bottom":
      return { ...ui, scroll: maxScroll }
    case "quit":
      return ui
  }
}
