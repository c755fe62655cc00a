/**
 * One call through opencode's SDK client, shared by the layers that talk to the server: the promise
 * wrapped so a throw or a timeout becomes the caller's typed failure (rendered `<what>: <reason>`).
 */
import { Duration, Effect } from "effect"
import type { SdkCallFailure } from "../../services/opencode/callFailure.js"

/** What the SDK's calls resolve to (with `throwOnError` off). */
export interface SdkResult {
  readonly data?: unknown
  readonly error?: unknown
  readonly response?: { readonly status: number }
}

export const sdkCall = <E>(f: () => Promise<SdkResult>, what: string, timeoutMs: number, fail: (failure: SdkCallFailure) => E): Effect.Effect<SdkResult, E> =>
  Effect.tryPromise({ try: f, catch: (e) => fail({ problem: "threw", call: what, detail: e instanceof Error ? e.message : String(e) }) }).pipe(
    Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: () => fail({ problem: "timeout", call: what, ms: timeoutMs }) })
  )

/** The HTTP status of a call that failed (`error` when the SDK gave none), or undefined for a 2xx answer. */
export const failedStatus = (r: SdkResult): number | "error" | undefined => {
  const status = r.response?.status
  if (r.error !== undefined) return status ?? "error"
  return status !== undefined && (status < 200 || status > 299) ? status : undefined
}
