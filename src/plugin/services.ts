/** Every service the engine needs; one layer provides them all (live in opencode, memory in tests). */
import type { AbortClient } from "../services/opencode/AbortClient.js"
import type { AppLog } from "../services/opencode/AppLog.js"
import type { PoolConfig } from "../services/pool/PoolConfig.js"
import type { SharedState } from "../services/state/SharedState.js"
import type { StateDir } from "../services/state/StateDir.js"
import type { TraceRecorder } from "../services/pool/TraceRecorder.js"
import type { Notifier } from "../services/notify/Notifier.js"
import type { SessionLookup } from "../services/opencode/SessionLookup.js"
import type { KeyEndpoint } from "../services/quota/KeyEndpoint.js"

export type PoolServices = AppLog | StateDir | SharedState | AbortClient | TraceRecorder | PoolConfig | Notifier | SessionLookup | KeyEndpoint
