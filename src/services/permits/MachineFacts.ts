/**
 * What the machine offers heavy work (issue 21): effective CPUs and where that number came from, memory
 * and its cgroup limit, and pressure (PSI). Capacity `auto` of a budget is read from it; `ocpool doctor`
 * and `ocpool permits` show it. Reading never fails: a fact the kernel does not give is undefined.
 */
import { Context, type Effect } from "effect"
import type { EffectiveCpus } from "../../core/machine/facts.js"

export interface MachineFactsView {
  /** The smallest cgroup CPU limit, capped at the online count, with its source (core/machine/facts.ts). */
  readonly cpus: EffectiveCpus
  readonly memory: {
    readonly totalBytes: number | undefined
    readonly availableBytes: number | undefined
    /** The smallest cgroup memory limit found; undefined when none is set. */
    readonly limitBytes: number | undefined
    /** The file that limit came from. */
    readonly limitSource: string | undefined
  }
  /** The cgroup version this process's limits were read from, and the cgroup directories found. */
  readonly cgroup: { readonly version: "v2" | "v1" | "none"; readonly paths: ReadonlyArray<string> }
  /** PSI `some avg10` (percent), undefined where the kernel has no pressure files. */
  readonly pressure: { readonly cpu: number | undefined; readonly memory: number | undefined }
}

export interface MachineFactsService {
  /** The facts as of now (files read again at every call: pressure and available memory change). */
  readonly read: Effect.Effect<MachineFactsView>
}

export class MachineFacts extends Context.Tag("opencode-pool/MachineFacts")<MachineFacts, MachineFactsService>() {}
