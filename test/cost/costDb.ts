/**
 * Databases for the cost tests (US-3): opencode 1.18.33's schema (test/retention/opencodeDb.ts) with
 * assistant messages shaped like the ones opencode writes (test/fixtures/opencode-1.18.33/db-samples.json).
 */
import type { OpencodeDb } from "../retention/opencodeDb.js"

export interface AssistantSeed {
  readonly agent: string
  /** `provider/model`. */
  readonly model: string
  readonly cost: number
  readonly input: number
  readonly output: number
  readonly reasoning?: number
  readonly cacheRead?: number
  readonly cacheWrite?: number
}

/** opencode's assistant message data, as 1.18.33 writes it. */
export const assistantData = (s: AssistantSeed, at: number): string => {
  const slash = s.model.indexOf("/")
  const reasoning = s.reasoning ?? 0
  const cache = { write: s.cacheWrite ?? 0, read: s.cacheRead ?? 0 }
  return JSON.stringify({
    role: "assistant",
    mode: s.agent,
    agent: s.agent,
    path: { cwd: "/work/proj", root: "/" },
    cost: s.cost,
    tokens: { total: s.input + s.output + reasoning + cache.read + cache.write, input: s.input, output: s.output, reasoning, cache },
    modelID: s.model.slice(slash + 1),
    providerID: s.model.slice(0, slash),
    time: { created: at, completed: at + 500 },
    finish: "stop"
  })
}

/** One assistant message in `session` at `at`; returns its id. */
export const assistant = (o: OpencodeDb, session: string, at: number, s: AssistantSeed): string => {
  const id = o.id("msg", at)
  o.db.prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)").run(id, session, at, at, assistantData(s, at))
  return id
}

/**
 * A message row holding any data and any `time_created`, as a damaged or hand-edited database may
 * (SQLite keeps a text or an out-of-range number in an INTEGER column, and a BLOB in a TEXT one).
 * `idAt` is the time the id encodes. Returns the id.
 */
export const rawMessage = (o: OpencodeDb, session: string, idAt: number, time: number | bigint | string, data: string | Buffer): string => {
  const id = o.id("msg", idAt)
  o.db.prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)").run(id, session, time, idAt, data)
  return id
}

/** opencode's assistant data (as `assistantData` writes it) changed by `edit`, for damaged rows. */
export const editedAssistant = (s: AssistantSeed, at: number, edit: (data: Record<string, any>) => void): string => {
  const data = JSON.parse(assistantData(s, at)) as Record<string, any>
  edit(data)
  return JSON.stringify(data)
}
