/** What the benchmarks share: command-line flags and a deterministic PRNG. */

/** The value after `--name`, if the flag is given. */
export const argValue = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}

/** A numeric flag `--name N`, or the fallback. */
export const arg = (name: string, fallback: number): number => {
  const v = argValue(name)
  return v === undefined ? fallback : Number(v)
}

/** A bare flag `--name`. */
export const flag = (name: string): boolean => process.argv.includes(`--${name}`)

/** mulberry32: a small deterministic PRNG, so every run generates the same data. */
export const rng = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
