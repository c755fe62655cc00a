/** Chunk sizing and the pause between the delete transactions (SPEC §1 EVENT_CHUNK_ROWS). */
import { EVENT_CHUNK_MIN_ROWS, EVENT_CHUNK_ROWS, FAST_TRANSACTIONS_TO_GROW, POLITE_PAUSE_MS, POLITE_WINDOW_MS, SLOW_TRANSACTION_MS } from "../constants.js"

export interface ChunkState {
  readonly size: number
  /** Fast transactions in a row since the last change of size. */
  readonly fast: number
}

export const initialChunk: ChunkState = { size: EVENT_CHUNK_ROWS, fast: 0 }

/** After a transaction of `elapsedMs`: halve on a slow one (not below 50), double after ten fast ones (not above 1000). */
export const nextChunk = (state: ChunkState, elapsedMs: number): ChunkState => {
  if (elapsedMs > SLOW_TRANSACTION_MS) return { size: Math.max(EVENT_CHUNK_MIN_ROWS, Math.floor(state.size / 2)), fast: 0 }
  const fast = state.fast + 1
  if (fast >= FAST_TRANSACTIONS_TO_GROW && state.size < EVENT_CHUNK_ROWS) return { size: Math.min(EVENT_CHUNK_ROWS, state.size * 2), fast: 0 }
  return { size: state.size, fast }
}

/**
 * The pause after a committed chunk. A writer waiting on SQLite's busy handler sleeps in growing steps
 * (up to 100 ms) and, against back-to-back transactions, keeps waking inside the next one: it could
 * wait half a second although no transaction lasts 20 ms. So while another connection has written in
 * the last POLITE_WINDOW_MS (opencode at work), each chunk is followed by a short pause that lets it
 * in; on a quiet database the sweep runs at full speed.
 */
export const pauseAfterChunk = (now: number, lastOtherWriteAt: number | undefined): number =>
  lastOtherWriteAt !== undefined && now - lastOtherWriteAt < POLITE_WINDOW_MS ? POLITE_PAUSE_MS : 0
