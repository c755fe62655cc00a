/**
 * The fields a failed call to opencode's server carries (PromptFailed, AbortFailed, LookupFailed;
 * docs/DECISIONS.md 250): the session it was about, the SDK call, the HTTP status, the wait that ran
 * out, the cause's text. Each error renders them as the text its logs have always shown.
 */
import { Schema } from "effect"
import { wholeSeconds } from "../../core/time.js"

export const callFields = {
  /** The session the call was about (absent for a create). */
  sessionId: Schema.optional(Schema.String),
  /** The SDK call that failed: `abort`, `status`, `create`, `prompt`. */
  call: Schema.optional(Schema.String),
  /** The HTTP status of an error answer (`error` when the SDK gave none). */
  status: Schema.optional(Schema.Union(Schema.Number, Schema.Literal("error"))),
  /** The wait that ran out, in ms (a timeout, a session still running). */
  ms: Schema.optional(Schema.Number),
  /** The cause's text (a request that threw), or the whole text of a scripted failure (`other`, memory layers). */
  detail: Schema.optional(Schema.String)
}

/** How `sdkCall` (layers/opencode/sdkCall.ts) says a call failed: it threw, or it timed out. */
export type SdkCallFailure =
  | { readonly problem: "threw"; readonly call: string; readonly detail: string }
  | { readonly problem: "timeout"; readonly call: string; readonly ms: number }

/** `<call>: <cause>` or `<call>: timed out after <n>s`: a call through `sdkCall` that threw or timed out. */
export const sdkCallText = (e: { readonly problem: string; readonly call?: string | undefined; readonly ms?: number | undefined; readonly detail?: string | undefined }): string =>
  e.problem === "timeout" ? `${e.call ?? ""}: timed out after ${wholeSeconds(e.ms ?? 0)}` : `${e.call ?? ""}: ${e.detail ?? ""}`

/** The text of the failures every call to the server shares (`e.problem` is `problem`): no server to call, a call that threw or timed out, a scripted failure. */
export const sharedCallText = (
  problem: "no-client" | "threw" | "timeout" | "other",
  e: { readonly problem: string; readonly call?: string | undefined; readonly ms?: number | undefined; readonly detail?: string | undefined }
): string => (problem === "no-client" ? "no server url" : problem === "other" ? (e.detail ?? "") : sdkCallText(e))
