/** Copy-on-write steps over read-only maps, as the core's immutable states use them. Pure. */

/** `m` with `k` set to `v` (a new map; `m` is left alone). */
export const setIn = <K, V>(m: ReadonlyMap<K, V>, k: K, v: V): Map<K, V> => new Map(m).set(k, v)

/** The entries of `m` that `keep` keeps; `m` itself when it keeps them all (no copy). */
export const filterMap = <K, V>(m: ReadonlyMap<K, V>, keep: (v: V, k: K) => boolean): ReadonlyMap<K, V> => {
  let out: Map<K, V> | undefined
  for (const [k, v] of m) {
    if (keep(v, k)) continue
    out ??= new Map(m)
    out.delete(k)
  }
  return out ?? m
}
