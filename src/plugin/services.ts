/** Every service the plugin's programs need; one layer provides them all (live in opencode, memory in tests). */
import type { AbortClient } from "../services/AbortClient.js"
import type { AppLog } from "../services/AppLog.js"
import type { ClaimStore } from "../services/ClaimStore.js"
import type { CooldownStore } from "../services/CooldownStore.js"
import type { PoolConfig } from "../services/PoolConfig.js"
import type { PoolLock } from "../services/PoolLock.js"
import type { StateDir } from "../services/StateDir.js"
import type { TraceRecorder } from "../services/TraceRecorder.js"

export type PoolServices = AppLog | StateDir | ClaimStore | CooldownStore | PoolLock | AbortClient | TraceRecorder | PoolConfig
