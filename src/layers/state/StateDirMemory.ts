/** No state directory: a process identity only (tests). */
import { Layer } from "effect"
import { StateDir } from "../../services/state/StateDir.js"

export const StateDirMemory = (pid: number, host = "memory") => Layer.succeed(StateDir, { dir: undefined, pid, host, startTime: null })
