/** Small bounded memories the engines keep (sessions' models, coaching, fallback episodes, failures). Pure. */

/**
 * A copy of `map` with `key` set to `value` as its newest entry, keeping at most `max` entries: the
 * oldest go first (a Map iterates in insertion order). `map` itself is never changed.
 */
export const withNewest = <K, V>(map: ReadonlyMap<K, V>, key: K, value: V, max: number): Map<K, V> => {
  const next = new Map(map)
  next.delete(key)
  next.set(key, value)
  for (const oldest of next.keys()) {
    if (next.size <= max) break
    next.delete(oldest)
  }
  return next
}
