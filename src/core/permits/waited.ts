/** The line appended to a heavy command's tool output when it waited for its permit (issue 21). Pure. */

import { spokenDuration } from "../time.js"

const budgetWords = (budget: string): string => (budget === "heavy" ? "a heavy-work permit" : `a ${budget} permit`)

/** `[opencode-pool] waited 42 s for a heavy-work permit; 2 commands ran before it` */
export const waitedLine = (budget: string, waitedMs: number, before: number): string =>
  `[opencode-pool] waited ${spokenDuration(waitedMs)} for ${budgetWords(budget)}; ${before === 1 ? "1 command" : `${before} commands`} ran before it`
