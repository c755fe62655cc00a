/** Every service the engine needs; one layer provides them all (live in opencode, memory in tests). */
import type { AbortClient } from "../services/AbortClient.js"
import type { AppLog } from "../services/AppLog.js"
import type { PoolConfig } from "../services/PoolConfig.js"
import type { PoolLock } from "../services/PoolLock.js"
import type { PoolStore } from "../services/PoolStore.js"
import type { StateDir } from "../services/StateDir.js"
import type { TraceRecorder } from "../services/TraceRecorder.js"
import type { Notifier } from "../services/Notifier.js"
import type { SessionLookup } from "../services/SessionLookup.js"

export type PoolServices = AppLog | StateDir | PoolStore | PoolLock | AbortClient | TraceRecorder | PoolConfig | Notifier | SessionLookup
