/**
 * How many edits a typo is from a word it may mean: "did you mean" for slot models (setup/modelCheck.ts)
 * and for commands and flags (cli/help/problems.ts).
 */

/** Optimal string alignment distance (edits, and a swap of two neighbours counted once), or `max + 1` once it must exceed `max`. */
export const editDistance = (a: string, b: string, max: number): number => {
  if (Math.abs(a.length - b.length) > max) return max + 1
  let before: Array<number> = []
  let prev: Array<number> = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1)
      row.push(d)
      best = Math.min(best, d)
    }
    if (best > max) return max + 1
    before = prev
    prev = row
  }
  return Math.min(prev[b.length]!, max + 1)
}
