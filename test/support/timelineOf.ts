/** A trace text replayed line by line through `feed` (as `ocpool replay --timeline` does) into the timeline builder. */
import type { Decision } from "../../src/core/trace/decision.js"
import { feed, startReplay, type ReplayCursor } from "../../src/core/trace/replay.js"
import { timelineBuilder } from "../../src/core/view/timeline.js"

export const replayTimeline = (text: string, title = "t") => {
  const b = timelineBuilder(title)
  let cursor: ReplayCursor = startReplay()
  const decisions: Array<Decision> = []
  const lines = text.split("\n")
  if (lines.at(-1) === "") lines.pop()
  for (const [i, line] of lines.entries()) {
    const r = feed(cursor, line)
    if (r._tag === "Invalid") throw new Error(`${title} line ${i + 1}: ${r.message}`)
    cursor = r.cursor
    b.add(r.input, r.decisions)
    decisions.push(...r.decisions)
  }
  return { timeline: b.finish(), decisions, state: cursor.state, lines: lines.length }
}
