/**
 * The timeline's per-pixel-column aggregation, shared by the static SVG (timelineSvg.ts) and the page's
 * script (src/web/timelineDraw.ts, bundled into the page): spans counted per lane and category in each
 * column (diff arrays), as runs of equal columns. Pure.
 */

/** Columns `from` to `to` (exclusive) of `lane`, each with these counts per category (at least one above 0). */
export interface ColumnRun {
  readonly lane: number
  readonly from: number
  readonly to: number
  readonly counts: ReadonlyArray<number>
}

/**
 * The runs of `items` over `width` columns; `col` gives a time's column (fractional, unclamped), an
 * item covers the columns of its start to its end on each of its lanes, in its category. In lane order,
 * each lane's runs left to right; runs with no item left out.
 */
export const columnRuns = <A>(
  items: ReadonlyArray<A>,
  lanes: number,
  cats: number,
  width: number,
  col: (ms: number) => number,
  startOf: (a: A) => number,
  endOf: (a: A) => number,
  laneOf: (a: A) => ReadonlyArray<number>,
  catOf: (a: A) => number
): Array<ColumnRun> => {
  const stride = width + 1
  const diff = new Int32Array(lanes * cats * stride)
  for (const a of items) {
    const c0 = Math.min(width - 1, Math.max(0, Math.floor(col(startOf(a)))))
    const c1 = Math.max(c0, Math.min(width - 1, Math.floor(col(endOf(a)))))
    const cat = catOf(a)
    for (const l of laneOf(a)) {
      const base = (l * cats + cat) * stride
      diff[base + c0]!++
      diff[base + c1 + 1]!--
    }
  }
  const runs: Array<ColumnRun> = []
  for (let l = 0; l < lanes; l++) {
    const acc = new Array<number>(cats).fill(0)
    let prev: Array<number> | undefined
    let from = 0
    const flush = (to: number): void => {
      if (prev !== undefined && prev.some((x) => x > 0)) runs.push({ lane: l, from, to, counts: prev })
    }
    for (let x = 0; x < width; x++) {
      let same = prev !== undefined
      for (let z = 0; z < cats; z++) {
        acc[z]! += diff[(l * cats + z) * stride + x]!
        if (same && acc[z] !== prev![z]) same = false
      }
      if (!same) {
        flush(x)
        prev = [...acc]
        from = x
      }
    }
    flush(width)
  }
  return runs
}
