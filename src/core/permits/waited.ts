/** The line appended to a heavy command's tool output when it waited for its permit (issue 21). Pure. */

/** `42 s`, `1 min 5 s`, `850 ms`: how long, for a person. */
export const spokenDuration = (ms: number): string => {
  if (!Number.isFinite(ms) || ms < 0) return "0 s"
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`
}

const budgetWords = (budget: string): string => (budget === "heavy" ? "a heavy-work permit" : `a ${budget} permit`)

/** `[opencode-pool] waited 42 s for a heavy-work permit; 2 commands ran before it` */
export const waitedLine = (budget: string, waitedMs: number, before: number): string =>
  `[opencode-pool] waited ${spokenDuration(waitedMs)} for ${budgetWords(budget)}; ${before === 1 ? "1 command" : `${before} commands`} ran before it`
