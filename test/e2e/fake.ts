/**
 * Starts `fake-llm.mjs` (a fake OpenAI-compatible provider) as a node child process on 127.0.0.1 and
 * gives typed access to its control endpoints.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { BudgetCount, BudgetGroup } from "../support/hiddenBudgets.mjs"
import { httpOk, isRunning, sleep, stopChild, track } from "./processes.js"

export const FAKE_LLM_SCRIPT: string = fileURLToPath(new URL("./fake-llm.mjs", import.meta.url))

export type FakeBehavior = "text" | "title" | "slow" | "task" | "question" | "bash" | "read" | "write" | "edit" | "context-map" | "429" | "503" | "hang" | "empty" | "limit" | "limit-400" | "reset" | "ratelimit" | "budget-429" | (string & {})

/** One chat-completions request as the fake logged it. */
export interface FakeRequest {
  readonly seq: number
  /** Epoch ms when it arrived. */
  readonly t: number
  readonly path: string
  /** `<provider>` when the provider's baseURL is `<fake url>/<provider>/v1` (as fakeConfig() does). */
  readonly provider?: string
  /** The bare model id, e.g. `pool-b`. */
  readonly model: string
  readonly behavior: FakeBehavior
  /** Which rule chose the behaviour: title-generator, queue, model-id, after-tool-result, directive(...), task-directive, default. */
  readonly why: string
  readonly stream: boolean
  readonly firstUserText: string
  readonly lastUserText: string
  /** The whole last user text (up to 20000 characters); `lastUserText` is its first 500. */
  readonly lastUserTextFull: string
  readonly nMessages: number
  readonly lastRole?: string
  readonly systemHead: string
  /** The system lines that start `opencode-pool quota:` (coaching, US-49). */
  readonly coachLines: ReadonlyArray<string>
  readonly tools: ReadonlyArray<string>
  readonly taskToolDescription?: string
  /** Tool calls the fake answered with (task, question, bash, read, write and context-map behaviours). */
  readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly args: Record<string, unknown> }>
  readonly replyText?: string
  readonly retryAfter?: string
  /** Request headers opencode sent that the fake records. */
  readonly headers: { readonly "user-agent"?: string; readonly "x-session-affinity"?: string }
  /** The HTTP status sent, once the response head is written (absent while `hang`/`slow` wait). */
  readonly status?: number
  /** Headers added to the response: a queue entry's `headers`, or the `ratelimit` behaviour's. */
  readonly extraHeaders?: Readonly<Record<string, string>>
  /** `error` with a queue entry's `body`: the response body sent, verbatim. */
  readonly errorBody?: string
  /** Hidden budgets: the group that counted this request (granted). */
  readonly budgetGroup?: string
  /** Hidden budgets: the refusal (`behavior: "budget-429"`): the group, the spent window and when it ends (epoch ms). */
  readonly budget?: { readonly group: string; readonly window: "minute" | "day"; readonly resetAt: number }
  /** hang: when the client closed the request. */
  readonly closedAt?: number
  readonly closedAfterMs?: number
}

export interface FakeTaskSpec {
  readonly subagent_type: string
  readonly prompt: string
  readonly description?: string
}

/** A queued behaviour, consumed by the first request whose model id matches (or any, without `model`). */
export interface FakeQueueEntry {
  readonly behavior: FakeBehavior
  /** The bare model id as the provider sees it, e.g. `pool-b` (not `fakeB/pool-b`). */
  readonly model?: string
  /** Only requests to this provider (the `<provider>` of the baseURL `<fake url>/<provider>/v1`). */
  readonly provider?: string
  /** Only requests whose last user text contains this (e.g. `"the context map of the project at"`: a refresh run's). */
  readonly match?: string
  /** How many matching requests this entry answers before it is used up (default 1), e.g. a 429 every retry gets. */
  readonly times?: number
  readonly retryAfter?: number | string
  readonly delayMs?: number
  /** The reply text of `text`/`slow`, or the question text of `question` (default "Pick one?"). */
  readonly text?: string
  /** The command of `bash` (default "echo probe-bash"). */
  readonly command?: string
  readonly tasks?: ReadonlyArray<FakeTaskSpec>
  /** `write`: one `write` tool call per file (content default "written by the fake model\n"). */
  readonly files?: ReadonlyArray<{ readonly filePath: string; readonly content?: string }>
  /** The directive's ARG for a queued behaviour, e.g. the path of `read` or `edit`. */
  readonly arg?: string
  /** `edit`: the text replaced (default "written by the fake model") and its replacement (default "edited by the fake model"). */
  readonly oldString?: string
  readonly newString?: string
  /** The error text of `429`, `limit-400` and `error` (each has its own default). */
  readonly message?: string
  /** The HTTP status of `error` (default 400). */
  readonly status?: number
  /**
   * `error` only: the response body, verbatim (a string as is, anything else as its JSON) instead of the
   * fake's `{"error":{message,type,code}}`; the response then carries only `content-type` and `headers`.
   */
  readonly body?: unknown
  /** The `content-type` of a `body` (default `application/json`). */
  readonly contentType?: string
  /** Extra headers on this entry's response, whatever its status (e.g. `x-ratelimit-remaining-requests`). */
  readonly headers?: Readonly<Record<string, string | number>>
}

export interface FakeLlm {
  readonly pid: number
  readonly port: number
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  /** `http://127.0.0.1:<port>/v1`: a provider `baseURL` (fakeConfig() uses `<url>/<provider>/v1` instead). */
  readonly baseURL: string
  /** Chat requests with seq > `since` (default: all since the last reset). */
  requests(since?: number): Promise<ReadonlyArray<FakeRequest>>
  health(): Promise<{ ok: boolean; port: number; requests: number; hanging: number; queued: number }>
  enqueue(...entries: ReadonlyArray<FakeQueueEntry>): Promise<void>
  /** Replaces the hidden budgets (`test/support/hiddenBudgets.mjs`; `[]` turns them off); a bad group rejects with the fake's reason. */
  setBudgets(groups: ReadonlyArray<BudgetGroup>): Promise<void>
  /** The hidden budgets and their counts per key and group. */
  budgets(): Promise<{ readonly groups: ReadonlyArray<BudgetGroup>; readonly counts: ReadonlyArray<BudgetCount> }>
  /** Clears the log, the queue, directive counters and budgets; seq keeps counting. */
  reset(): Promise<void>
  /** Polls the log (every 100 ms) until a request matches; bounded by `timeoutMs`. */
  waitForRequest(predicate: (r: FakeRequest) => boolean, timeoutMs: number): Promise<FakeRequest>
  stop(): Promise<void>
}

export interface StartFakeLlmOptions {
  /** Extra env: FAKE_LOG, FAKE_MAX_REQUESTS (default 2000), FAKE_RETRY_AFTER (default 120), FAKE_SLOW_MS. */
  readonly env?: Readonly<Record<string, string>>
  /** Bound on start-up; default 10 s. */
  readonly timeoutMs?: number
}

const getJson = async <A>(url: string, init: RequestInit = {}): Promise<A> => {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) })
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${url} -> ${res.status} ${await res.text()}`)
  return (await res.json()) as A
}

export const startFakeLlm = async (options: StartFakeLlmOptions = {}): Promise<FakeLlm> => {
  const timeoutMs = options.timeoutMs ?? 10_000
  const child = spawn(process.execPath, [FAKE_LLM_SCRIPT], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, FAKE_PORT: "0", FAKE_PARENT_PID: String(process.pid), ...options.env }
  })
  track(child)
  let output = ""
  child.stderr.on("data", (d: Buffer) => (output += d.toString()))
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fake LLM did not report its port within ${timeoutMs} ms\n${output}`)), timeoutMs)
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString()
      const m = /FAKE_LLM_PORT=(\d+)/.exec(output)
      if (m !== null) {
        clearTimeout(timer)
        resolve(Number(m[1]))
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`fake LLM exited with code ${code}\n${output}`))
    })
  }).catch(async (e: unknown) => {
    await stopChild(child, 1_000)
    throw e
  })
  const url = `http://127.0.0.1:${port}`
  if (!(await httpOk(`${url}/_fake/health`, 2_000))) {
    await stopChild(child, 1_000)
    throw new Error(`fake LLM on port ${port} is not healthy`)
  }

  const requests = (since = 0) => getJson<ReadonlyArray<FakeRequest>>(`${url}/_fake/requests?since=${since}`)
  return {
    pid: child.pid ?? -1,
    port,
    url,
    baseURL: `${url}/v1`,
    requests,
    health: () => getJson(`${url}/_fake/health`),
    enqueue: async (...entries) => {
      await getJson(`${url}/_fake/queue`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ queue: entries }) })
    },
    setBudgets: async (groups) => {
      await getJson(`${url}/_fake/budgets`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ groups }) })
    },
    budgets: () => getJson(`${url}/_fake/budgets`),
    reset: async () => {
      await getJson(`${url}/_fake/reset`, { method: "POST" })
    },
    waitForRequest: async (predicate, waitMs) => {
      const deadline = Date.now() + waitMs
      for (;;) {
        const hit = (await requests()).find(predicate)
        if (hit !== undefined) return hit
        if (Date.now() >= deadline || !isRunning(child)) throw new Error(`timeout (${waitMs} ms) waiting for a matching fake LLM request`)
        await sleep(100)
      }
    },
    stop: () => stopChild(child)
  }
}
