/** Where shared state lives (SPEC §2.1), and this process's identity in it. */
import { Context } from "effect"

export interface StateDirService {
  /** `undefined` when the state directory is unusable: the plugin then keeps everything in memory. */
  readonly dir: string | undefined
  /**
   * The directory passed the trust rules (core/stateTrust.ts: a real directory owned by this user,
   * mode 700, holding only state files). Only then are other processes' dead claim files, expired
   * cooldowns and orphan `*.tmp` files deleted; otherwise they are read and left alone. Absent: false.
   */
  readonly trusted?: boolean
  readonly pid: number
  readonly host: string
  /** Linux process start token (field 22 of /proc/<pid>/stat), or null elsewhere. */
  readonly startTime: string | null
}

export class StateDir extends Context.Tag("opencode-pool/StateDir")<StateDir, StateDirService>() {}
