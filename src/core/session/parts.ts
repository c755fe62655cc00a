/**
 * What a message part opencode reports (`message.part.updated`) says about its session: a `retry` part
 * says nothing (opencode writes it while it waits to retry), a `text`, `reasoning` or `tool` part is
 * output (the model produced something: a spin count ends), any other part is activity only.
 */

export type PartSignal = "none" | "activity" | "output"

/** The part types that count as output. */
export const OUTPUT_PART_TYPES: ReadonlySet<string> = new Set(["text", "reasoning", "tool"])

/** What a part of type `type` (as read: any value) tells about its session. */
export const partSignal = (type: unknown): PartSignal =>
  type === "retry" ? "none" : typeof type === "string" && OUTPUT_PART_TYPES.has(type) ? "output" : "activity"
