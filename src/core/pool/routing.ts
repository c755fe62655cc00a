/** Which spawns the pool routes (SPEC §6.3), and how: two-pass declaration-order routing with overflow (SPEC §6.1). Pure and cursor-free. */
import { CAP_FACTOR, type Base } from "../constants.js"

/** Whether an agent name is a pooled base (`explore`, `implement`, `context`): a spawn of it is routed. */
export const isPooledBase = (name: string): name is Base => name === "explore" || name === "implement" || name === "context"

export type Pass = "first" | "second" | "overflow"

export interface Pick {
  /** 0-based position in the slot table. */
  readonly position: number
  readonly pass: Pass
}

export interface RouteInput {
  readonly weights: ReadonlyArray<number>
  readonly loads: ReadonlyArray<number>
  readonly cooling: ReadonlyArray<boolean>
}

const leastLoaded = (loads: ReadonlyArray<number>, eligible: (i: number) => boolean): number => {
  let best = -1
  for (let i = 0; i < loads.length; i++) {
    if (!eligible(i)) continue
    if (best < 0 || loads[i]! < loads[best]!) best = i
  }
  return best
}

/** The slot §6.1 picks now, or `undefined` for an empty table. The pool never refuses. */
export const pickSlot = ({ cooling, loads, weights }: RouteInput): Pick | undefined => {
  const n = weights.length
  if (n === 0) return undefined
  let anyUsable = false
  for (let i = 0; i < n; i++) {
    if (cooling[i]) continue
    anyUsable = true
    if (loads[i]! < weights[i]!) return { position: i, pass: "first" }
  }
  if (!anyUsable) return { position: leastLoaded(loads, () => true), pass: "overflow" }
  for (let i = 0; i < n; i++) {
    if (!cooling[i] && loads[i]! < CAP_FACTOR * weights[i]!) return { position: i, pass: "second" }
  }
  return { position: leastLoaded(loads, (i) => !cooling[i]), pass: "overflow" }
}
