#!/usr/bin/env node
// Fake OpenAI-compatible chat-completions provider for the opencode e2e harness.
// node:http on 127.0.0.1 only, no dependencies. Run: `node test/e2e/fake-llm.mjs`; it prints
// `FAKE_LLM_PORT=<n>` on stdout once it listens.
//
// Env:
//   FAKE_PORT           port (default 0 = any free port)
//   FAKE_LOG            optional JSONL file, one line per chat request
//   FAKE_MAX_REQUESTS   hard cap on chat requests (default 2000); later ones get HTTP 500, so a
//                       runaway loop (e.g. `empty`) is bounded
//   FAKE_RETRY_AFTER    default `retry-after` header (seconds) of the 429 behaviour (default 120)
//   FAKE_SLOW_MS        default delay of the `slow` behaviour (default 1500)
//   FAKE_PARENT_PID     exit when this process is gone (checked every second)
//
// Behaviour of one chat request, first rule that applies:
//   1. opencode's title generator (system prompt "You are a title generator")  -> "title": quick text
//   1b. hidden budgets (POST /_fake/budgets, below) refuse the request          -> "budget-429"
//   2. a queue entry (POST /_fake/queue) whose `model` matches (or has none)   -> that entry
//      and whose `provider` (if any) is the request's path prefix and whose `match` (if any) is a
//      substring of the last user text; `times: N` answers N requests before it is used up (default 1)
//   3. the model id is `fake-<B>` (e.g. fake-hang, fake-429, fake-empty)       -> B, always;
//      except a tool-call B (task, question, bash, read) once a tool result came back (then "text", to end the turn)
//   4. the last message is a tool result                                        -> "text" (final answer)
//   4b. the last user text is opencode-pool's context map refresh prompt (it starts "Create the
//      context map of the project at ROOT" or "Update the context map of the project at ROOT")
//                                                                               -> "context-map"
//   5. a `[[fake:B]]` directive in the last user text (outside any [[task:…]])  -> B
//        [[fake:B:ARG]]  ARG = retry-after seconds for 429/503, delay ms for slow, reply text for text,
//                        the question text for question, the command for bash. ARG runs to the first
//                        `]` (so it cannot contain one) and may contain colons; an ARG ending in
//                        `x<digits>` is read as the count below.
//        [[fake:BxN]] / [[fake:B:ARGxN]]  only the first N requests (per model + text) get B
//      So a tool-call directive (question, bash) is answered once: the request that carries the tool
//      result ends the turn with text (rule 4), exactly like a [[task:…]] directive.
//   6. one or more `[[task:AGENT:CHILD PROMPT]]` directives in the last user text -> "task" with one
//      `task` tool call per directive: {description, prompt: CHILD PROMPT, subagent_type: AGENT}.
//      The child prompt may itself carry directives, e.g. [[task:explore:look [[fake:hang]]]]:
//      brackets are matched, so the inner directive belongs to the child.
//   7. otherwise                                                                -> "text"
//
// Behaviours:
//   text      SSE text "FAKE-OK from model=<id> (request #<seq>)" (or the given text)
//   title     SSE text "E2E title"
//   slow      text after a delay
//   task      SSE tool call(s) to `task`
//   question  SSE tool call to opencode's `question` tool: {questions:[{question: ARG or "Pick one?",
//             header:"Probe", options:[{label:"A", description:"option A"}, {label:"B", …}]}]}.
//             opencode then emits `question.asked` and waits for POST /question/:id/reply or /reject
//   bash      SSE tool call to `bash`: {command: ARG or "echo probe-bash", description:"Echo probe"}.
//             With `"permission": {"bash": "ask"}` opencode emits `permission.asked` and waits for
//             POST /permission/:id/reply {"reply":"once"|"always"|"reject"}
//   read      SSE tool call to `read`: {filePath: ARG or "README.md"} (an agent whose permissions deny
//             read gets the tool part in state "error" with opencode's rule message)
//   write     SSE tool call(s) to `write`: {filePath: ARG, content: "written by the fake model\n"}, or one
//             call per queue entry `files: [{filePath, content?}]` (an agent whose edit rules deny the
//             path gets the tool part in state "error" with opencode's rule message)
//   edit      SSE tool call to `edit`: {filePath: ARG, oldString: `oldString` or "written by the fake model",
//             newString: `newString` or "edited by the fake model"}. opencode's edit wants the file read
//             in the same session first: queue a `read` entry (`arg`: the path) and then the `edit`
//             entry; the request after the read's result takes the second entry (rule 2 before rule 4)
//   context-map  the context agent's answer to a refresh prompt: two `write` calls, ROOT/.opencode/context/
//             architecture.md and ROOT/.opencode/context/decisions.md (content names the request), then,
//             once the tool results come back, the text "architecture.md: written\ndecisions.md: written"
//   429       HTTP 429, JSON error body, `retry-after` (default 120); message "Rate limit exceeded (fake 429)"
//             or a queue entry's `message` (e.g. "You exceeded your current quota")
//   503       HTTP 503, JSON error body, `retry-after` (default 1)
//   hang      accepts and never answers; the record gets closedAt/closedAfterMs when the client closes
//   empty     HTTP 200 SSE with only `data: [DONE]` (opencode then re-asks ~10/s: a spin)
//   limit     HTTP 200 SSE whose only chunk is {"error":{"message":"limit reached"}}
//   limit-400 HTTP 400 {"error":{"message":"limit reached"}}: not retried by opencode, so a root session
//             ends at once with `session.error` (APIError, statusCode 400, isRetryable false), then idle.
//             (`limit` is not retried either, but its session.error is an UnknownError whose message
//             is the JSON-stringified error object; `429`/`503` are retried first.) A queue entry's
//             `message` replaces "limit reached" (e.g. "Monthly usage limit reached").
//   error     HTTP `status` (queue entry field, or ARG; default 400) with the JSON error body
//             {"error":{"message": `message` or "fake error", "type", "code"}} (type rate_limit_error
//             and code rate_limit_exceeded for 429, else server_error and the status), e.g.
//             {behavior:"error", status:400, message:"This model's maximum context length is 8192 tokens"}
//             A queue entry's `body` replaces that body verbatim: a string is sent as is, anything
//             else as its JSON; the only response headers are then `content-type` (`contentType`,
//             default application/json) and the entry's `headers`, as a real provider's error. E.g.
//             {behavior:"error", status:402, body:{error:{message:"Insufficient credits", code:402}}}.
//             The record's `errorBody` is the body sent.
//   reset     HTTP 200 SSE, one text delta, then the socket is destroyed
//   ratelimit text, and the response carries rate-limit headers. ARG `REMAINING/LIMIT/RESETSECONDS`
//             (e.g. [[fake:ratelimit:1/100/120]]) gives `x-ratelimit-remaining-requests: REMAINING`,
//             `x-ratelimit-limit-requests: LIMIT`, `x-ratelimit-reset-requests: RESETSECONDS` + "s"
//             (default 1/100/60; a part that is missing or not a number takes its default)
//
// Hidden budgets (issue 35; the arithmetic is test/support/hiddenBudgets.mjs, shared with the
// simulations): POST /_fake/budgets {"groups":[{name, models, perMinute?, perDay?, stated?}]} replaces
// the budgets (an empty list turns them off; a bad group is a 400 naming the problem). A group's
// models (bare ids, e.g. "pool-a") share one count per API key (the request's `authorization: Bearer`
// value, else its `x-api-key`, else ""): `perMinute` requests per fixed calendar minute and `perDay`
// per UTC day (ends 00:00 UTC), counted on the fake's clock (Date.now()). A granted request goes on to
// the rules below (queue, directives, …) and its answer carries no rate-limit header; a request over
// either budget gets `budget-429` instead: HTTP 429 with the body
// {"error":{"message":"Rate limit exceeded: <group>-per-min." (or -per-day.), "code":429}} and the reset
// stated as the group's `stated` says: "retry-after" (default; the header, whole seconds to the end of
// the spent window), "body" (OpenRouter's form: `error.metadata.headers["X-RateLimit-Reset"]`, epoch
// ms, no header) or "none" (nothing). A refused request counts in no window and takes no queue entry;
// the title generator is never counted. The record gets `budget: {group, window, resetAt}` on a
// refusal (and `retryAfter`, the header's value, when stated so), `budgetGroup` on a counted success. GET /_fake/budgets {groups, counts} (counts: one row per
// key and group: the current windows' starts and uses, granted, refused). POST /_fake/reset clears them.
//
// Extra response headers: a queue entry's `headers` ({name: value}) are added to the response that
// entry chooses, whatever its behaviour or status (e.g. {behavior:"text", headers:{"x-ratelimit-
// remaining-requests":"1"}}); they override the behaviour's own headers of the same name. The request
// record says what was sent: `status` (the HTTP status, once the headers are written) and
// `extraHeaders` (the added headers, from `headers` or the ratelimit directive).
//
// Control endpoints:
//   GET  /_fake/health               {ok, port, requests, hanging, queued}
//   GET  /_fake/requests[?since=N]   request records with seq > N
//   POST /_fake/queue                {"queue":[{behavior, model?, provider?, match?, times?, retryAfter?, delayMs?,
//                                     text?, command?, tasks?: [{subagent_type, prompt, description?}],
//                                     files?: [{filePath, content?}], arg?, oldString?, newString?,
//                                     headers?, message?, status?, body?, contentType?}]} -> appended
//                                    (text is also the question text of `question`; command is bash's;
//                                    headers: extra response headers, see above; message: the error
//                                    message of 429, limit-400 and error; status: error's HTTP status;
//                                    body/contentType: error's raw body; provider: only requests under
//                                    /<provider>/v1; times: how many requests the entry answers)
//   POST /_fake/budgets              {"groups":[…]} -> {groups}: hidden budgets (above); [] turns them off
//   GET  /_fake/budgets              {groups, counts}
//   POST /_fake/reset                clears the log, the queue, the directive counters and the budgets (not seq)
//   GET  /v1/models                  model list
import fs from "node:fs"
import http from "node:http"
import { makeHiddenBudgets } from "../support/hiddenBudgets.mjs"

const PORT = Number(process.env.FAKE_PORT || 0)
const LOG = process.env.FAKE_LOG || ""
const MAX_REQUESTS = Number(process.env.FAKE_MAX_REQUESTS || 2000)
const DEFAULT_RETRY_AFTER = String(process.env.FAKE_RETRY_AFTER || "120")
const DEFAULT_SLOW_MS = Number(process.env.FAKE_SLOW_MS || 1500)
const PARENT_PID = Number(process.env.FAKE_PARENT_PID || 0)

let requests = []
let queue = []
let directiveCounts = new Map()
let budgets = makeHiddenBudgets({ groups: [] })
const hanging = new Set()
let seq = 0
let port = 0

function textOf(content) {
  if (typeof content === "string") return content
  if (Array.isArray(content)) return content.map((p) => (typeof p === "string" ? p : (p?.text ?? ""))).join("\n")
  return ""
}

/** Finds `[[task:AGENT:PROMPT]]` spans with matched brackets; returns them and the text without them. */
function parseTaskDirectives(text) {
  const tasks = []
  let rest = ""
  let i = 0
  while (i < text.length) {
    const start = text.indexOf("[[task:", i)
    if (start < 0) break
    rest += text.slice(i, start)
    let depth = 1
    let j = start + "[[task:".length
    while (j < text.length && depth > 0) {
      if (text.startsWith("[[", j)) (depth++, (j += 2))
      else if (text.startsWith("]]", j)) (depth--, (j += 2))
      else j++
    }
    if (depth > 0) {
      rest += text.slice(start)
      i = text.length
      break
    }
    const inner = text.slice(start + "[[task:".length, j - 2)
    const colon = inner.indexOf(":")
    const agent = (colon < 0 ? inner : inner.slice(0, colon)).trim() || "explore"
    const prompt = colon < 0 ? "child: say hi" : inner.slice(colon + 1)
    tasks.push({ subagent_type: agent, prompt, description: `e2e ${agent} task` })
    i = j
  }
  rest += text.slice(i)
  return { tasks, rest }
}

/** Behaviours that answer with a tool call: once the tool result comes back, the turn ends with text. */
const TOOL_CALL_BEHAVIOURS = new Set(["task", "question", "bash", "read", "write", "edit", "context-map"])
const DEFAULT_WRITE_CONTENT = "written by the fake model\n"
/** opencode-pool's context map refresh prompt; group 2 is the project root. */
const REFRESH_PROMPT = /(?:^|\n)(Create|Update) the context map of the project at (.+?)(?::| \()/
const DEFAULT_QUESTION = "Pick one?"
const DEFAULT_BASH_COMMAND = "echo probe-bash"

/** The API key a request names: `authorization: Bearer <key>`, else `x-api-key`, else "". */
function apiKeyOf(req) {
  const auth = String(req.headers.authorization ?? "")
  const bearer = /^Bearer\s+(.+)$/i.exec(auth)
  return bearer ? bearer[1].trim() : String(req.headers["x-api-key"] ?? "")
}

const TITLE_GENERATOR = /You are a title generator/i
const systemText = (body) =>
  (Array.isArray(body.messages) ? body.messages : [])
    .filter((m) => m.role === "system")
    .map((m) => textOf(m.content))
    .join("\n")

/** Rule 1b: the hidden budgets' refusal, or undefined (a counted request's record gets `budgetGroup`). */
function overBudget(req, body, rec) {
  if (TITLE_GENERATOR.test(systemText(body))) return undefined
  const a = budgets.answer({ key: apiKeyOf(req), model: String(body.model ?? ""), now: Date.now() })
  if (a.ok) {
    if (a.group !== undefined) rec.budgetGroup = a.group
    return undefined
  }
  rec.budget = { group: a.group, window: a.window, resetAt: a.resetAt }
  return { behavior: "budget-429", refusal: a, why: "budget" }
}

function choose(body, provider) {
  const model = String(body.model ?? "")
  const msgs = Array.isArray(body.messages) ? body.messages : []
  const system = systemText(body)
  const last = msgs[msgs.length - 1]
  const lastUser = [...msgs].reverse().find((m) => m.role === "user")
  const lastUserText = textOf(lastUser?.content)
  const afterTool = last?.role === "tool"

  if (TITLE_GENERATOR.test(system)) return { behavior: "title", why: "title-generator" }

  const qi = queue.findIndex(
    (e) => (!e.model || e.model === model) && (!e.provider || e.provider === provider) && (typeof e.match !== "string" || lastUserText.includes(e.match))
  )
  if (qi >= 0) {
    const entry = queue[qi]
    const times = Number.isInteger(entry.times) && entry.times > 1 ? entry.times : 1
    const used = (entry.used ?? 0) + 1
    if (used >= times) queue.splice(qi, 1)
    else entry.used = used
    return { ...entry, behavior: String(entry.behavior ?? "text"), why: times > 1 ? `queue(${used}/${times})` : "queue" }
  }

  const mm = model.match(/^fake-([a-z0-9-]+)$/i)
  if (mm && !(afterTool && TOOL_CALL_BEHAVIOURS.has(mm[1]))) return { behavior: mm[1], why: "model-id" }

  if (afterTool) return { behavior: "text", why: "after-tool-result", ...(REFRESH_PROMPT.test(lastUserText) ? { text: "architecture.md: written\ndecisions.md: written" } : {}) }

  const refresh = REFRESH_PROMPT.exec(lastUserText)
  if (refresh) return { behavior: "context-map", root: refresh[2], why: "refresh-prompt" }

  const { tasks, rest } = parseTaskDirectives(lastUserText)
  const d = rest.match(/\[\[fake:([a-z0-9-]+?)(?::([^\]]*?))?(?:x(\d+))?\]\]/i)
  if (d) {
    const behavior = d[1]
    const arg = d[2]
    const spec = { behavior, ...(arg !== undefined ? { arg } : {}), ...(tasks.length > 0 ? { tasks } : {}) }
    if (d[3]) {
      const key = model + "\u0000" + lastUserText
      const n = (directiveCounts.get(key) ?? 0) + 1
      directiveCounts.set(key, n)
      if (n <= Number(d[3])) return { ...spec, why: `directive(${n}/${d[3]})` }
      // exhausted: fall through to the task directive, if any, else text
    } else {
      return { ...spec, why: "directive" }
    }
  }
  if (tasks.length > 0) return { behavior: "task", tasks, why: "task-directive" }
  return { behavior: "text", why: d ? "directive-exhausted" : "default" }
}

const now = () => Math.floor(Date.now() / 1000)
const USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }

function sseHeaders(res) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
}
function chunk(res, id, model, delta, finish = null, usage) {
  const c = { id, object: "chat.completion.chunk", created: now(), model, choices: [{ index: 0, delta, finish_reason: finish }] }
  if (usage) c.usage = usage
  res.write(`data: ${JSON.stringify(c)}\n\n`)
}

function replyText(res, body, rec, text) {
  const id = `chatcmpl-fake-${rec.seq}`
  const model = body.model
  rec.replyText = text
  if (body.stream) {
    sseHeaders(res)
    chunk(res, id, model, { role: "assistant", content: "" })
    for (const piece of text.match(/.{1,16}/gs) ?? [""]) chunk(res, id, model, { content: piece })
    chunk(res, id, model, {}, "stop", USAGE)
    res.end("data: [DONE]\n\n")
  } else {
    completion(res, id, model, { role: "assistant", content: text }, "stop")
  }
}

/** A non-streamed chat completion with one choice. */
function completion(res, id, model, message, finishReason) {
  res.writeHead(200, { "content-type": "application/json" })
  res.end(JSON.stringify({ id, object: "chat.completion", created: now(), model, choices: [{ index: 0, message, finish_reason: finishReason }], usage: USAGE }))
}

function replyToolCalls(res, body, rec, calls) {
  const id = `chatcmpl-fake-${rec.seq}`
  const model = body.model
  rec.toolCalls = calls.map(([name, args]) => ({ name, args }))
  if (body.stream) {
    sseHeaders(res)
    calls.forEach(([name, args], i) => {
      const callId = `call_fake_${rec.seq}_${i}`
      const argStr = JSON.stringify(args)
      const half = Math.floor(argStr.length / 2)
      chunk(res, id, model, { role: "assistant", content: null, tool_calls: [{ index: i, id: callId, type: "function", function: { name, arguments: "" } }] })
      chunk(res, id, model, { tool_calls: [{ index: i, function: { arguments: argStr.slice(0, half) } }] })
      chunk(res, id, model, { tool_calls: [{ index: i, function: { arguments: argStr.slice(half) } }] })
    })
    chunk(res, id, model, {}, "tool_calls", USAGE)
    res.end("data: [DONE]\n\n")
  } else {
    const toolCalls = calls.map(([name, args], i) => ({ id: `call_fake_${rec.seq}_${i}`, type: "function", function: { name, arguments: JSON.stringify(args) } }))
    completion(res, id, model, { role: "assistant", content: null, tool_calls: toolCalls }, "tool_calls")
  }
}

function jsonError(res, status, message, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", "x-fake": String(status), ...headers })
  res.end(JSON.stringify({ error: { message, type: status === 429 ? "rate_limit_error" : "server_error", code: status === 429 ? "rate_limit_exceeded" : status } }))
}

/** The ratelimit directive's headers from `REMAINING/LIMIT/RESETSECONDS`. */
function rateLimitHeaders(arg) {
  const [remaining, limit, reset] = String(arg ?? "").split("/").map((x) => (x !== undefined && /^\d+(\.\d+)?$/.test(x.trim()) ? x.trim() : undefined))
  return {
    "x-ratelimit-remaining-requests": remaining ?? "1",
    "x-ratelimit-limit-requests": limit ?? "100",
    "x-ratelimit-reset-requests": `${reset ?? "60"}s`
  }
}

/** A queue entry's `headers` as string pairs (anything else is ignored). */
function extraHeadersOf(headers) {
  if (headers === null || typeof headers !== "object" || Array.isArray(headers)) return undefined
  const out = {}
  for (const [k, v] of Object.entries(headers)) if (typeof v === "string" || typeof v === "number") out[k] = String(v)
  return Object.keys(out).length > 0 ? out : undefined
}

/** Adds `extra` to every head this response writes, and records the status sent. */
function decorate(res, rec, extra) {
  const writeHead = res.writeHead.bind(res)
  res.writeHead = (status, ...rest) => {
    rec.status = status
    if (extra !== undefined) {
      const i = rest.findIndex((x) => x !== null && typeof x === "object")
      const names = new Set(Object.keys(extra).map((k) => k.toLowerCase()))
      const own = i >= 0 ? Object.fromEntries(Object.entries(rest[i]).filter(([k]) => !names.has(k.toLowerCase()))) : {}
      if (i >= 0) rest[i] = { ...own, ...extra }
      else rest.push({ ...extra })
    }
    return writeHead(status, ...rest)
  }
}

/** An error answer whose body is given verbatim (a queue entry's `body`): a string as is, else its JSON. */
function rawError(res, rec, status, body, contentType) {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  rec.errorBody = text
  res.writeHead(status, { "content-type": typeof contentType === "string" ? contentType : "application/json" })
  res.end(text)
}

function handleChat(req, res, body, rec) {
  const spec = overBudget(req, body, rec) ?? choose(body, rec.provider)
  const { behavior, why } = spec
  rec.behavior = behavior
  rec.why = why
  const arg = spec.arg !== undefined && spec.arg !== "" ? spec.arg : undefined
  const extra = behavior === "ratelimit" ? { ...rateLimitHeaders(spec.arg), ...extraHeadersOf(spec.headers) } : extraHeadersOf(spec.headers)
  if (extra !== undefined) rec.extraHeaders = extra
  decorate(res, rec, extra)
  log(rec)
  switch (behavior) {
    case "title":
      return replyText(res, body, rec, "E2E title")
    case "text":
      return replyText(res, body, rec, spec.text ?? arg ?? `FAKE-OK from model=${body.model} (request #${rec.seq})`)
    case "ratelimit":
      return replyText(res, body, rec, spec.text ?? `FAKE-OK from model=${body.model} (request #${rec.seq})`)
    case "slow": {
      const ms = Number(spec.delayMs ?? arg ?? DEFAULT_SLOW_MS)
      rec.delayMs = ms
      const timer = setTimeout(() => replyText(res, body, rec, spec.text ?? `FAKE-OK (slow) from model=${body.model} (request #${rec.seq})`), ms)
      res.on("close", () => clearTimeout(timer))
      return
    }
    case "task": {
      const tasks = Array.isArray(spec.tasks) && spec.tasks.length > 0 ? spec.tasks : [{ subagent_type: "explore", prompt: "child: say hi" }]
      return replyToolCalls(
        res,
        body,
        rec,
        tasks.map((t) => ["task", { description: t.description ?? `e2e ${t.subagent_type ?? "explore"} task`, prompt: t.prompt ?? "child: say hi", subagent_type: t.subagent_type ?? "explore" }])
      )
    }
    case "question":
      return replyToolCalls(res, body, rec, [
        [
          "question",
          {
            questions: [
              {
                question: spec.text ?? arg ?? DEFAULT_QUESTION,
                header: "Probe",
                options: [
                  { label: "A", description: "option A" },
                  { label: "B", description: "option B" }
                ]
              }
            ]
          }
        ]
      ])
    case "bash":
      return replyToolCalls(res, body, rec, [["bash", { command: spec.command ?? arg ?? DEFAULT_BASH_COMMAND, description: "Echo probe" }]])
    case "read":
      return replyToolCalls(res, body, rec, [["read", { filePath: arg ?? "README.md" }]])
    case "write": {
      const files = Array.isArray(spec.files) && spec.files.length > 0 ? spec.files : [{ filePath: arg ?? "fake-written.txt" }]
      return replyToolCalls(
        res,
        body,
        rec,
        files.map((f) => ["write", { filePath: String(f.filePath), content: typeof f.content === "string" ? f.content : DEFAULT_WRITE_CONTENT }])
      )
    }
    case "edit":
      return replyToolCalls(res, body, rec, [
        [
          "edit",
          {
            filePath: arg ?? "fake-written.txt",
            oldString: typeof spec.oldString === "string" ? spec.oldString : "written by the fake model",
            newString: typeof spec.newString === "string" ? spec.newString : "edited by the fake model"
          }
        ]
      ])
    case "context-map": {
      const dir = `${String(spec.root ?? ".").replace(/\/+$/, "")}/.opencode/context`
      const note = `(fake request #${rec.seq})`
      return replyToolCalls(res, body, rec, [
        ["write", { filePath: `${dir}/architecture.md`, content: `# Architecture\n\nStart here: src/ ${note}\n` }],
        ["write", { filePath: `${dir}/decisions.md`, content: `# Decisions\n\nNone yet ${note}\n` }]
      ])
    }
    case "429": {
      const ra = String(spec.retryAfter ?? arg ?? DEFAULT_RETRY_AFTER)
      rec.retryAfter = ra
      return jsonError(res, 429, typeof spec.message === "string" ? spec.message : "Rate limit exceeded (fake 429)", { "retry-after": ra })
    }
    case "budget-429": {
      const { status, headers, body: errorBody } = spec.refusal
      const text = JSON.stringify(errorBody)
      rec.errorBody = text
      if (headers["retry-after"] !== undefined) rec.retryAfter = headers["retry-after"]
      res.writeHead(status, headers)
      return res.end(text)
    }
    case "503": {
      const ra = String(spec.retryAfter ?? arg ?? "1")
      rec.retryAfter = ra
      return jsonError(res, 503, "upstream overloaded", { "retry-after": ra })
    }
    case "limit":
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" })
        return res.end(JSON.stringify({ error: { message: "limit reached" } }))
      }
      sseHeaders(res)
      res.write(`data: ${JSON.stringify({ error: { message: "limit reached" } })}\n\n`)
      return res.end()
    case "limit-400":
      res.writeHead(400, { "content-type": "application/json" })
      return res.end(JSON.stringify({ error: { message: typeof spec.message === "string" ? spec.message : "limit reached" } }))
    case "error": {
      const status = Number(spec.status ?? arg ?? 400)
      if (spec.body !== undefined && spec.body !== null) return rawError(res, rec, Number.isInteger(status) && status >= 400 && status <= 599 ? status : 400, spec.body, spec.contentType)
      return jsonError(res, Number.isInteger(status) && status >= 400 && status <= 599 ? status : 400, typeof spec.message === "string" ? spec.message : "fake error")
    }
    case "empty":
      sseHeaders(res)
      return res.end("data: [DONE]\n\n")
    case "reset":
      sseHeaders(res)
      chunk(res, `chatcmpl-fake-${rec.seq}`, body.model, { role: "assistant", content: "about to die " })
      setTimeout(() => req.socket.destroy(), 50)
      return
    case "hang": {
      hanging.add(res)
      const t0 = Date.now()
      res.on("close", () => {
        hanging.delete(res)
        rec.closedAt = Date.now()
        rec.closedAfterMs = rec.closedAt - t0
        if (LOG) fs.appendFileSync(LOG, JSON.stringify({ seq: rec.seq, event: "client-closed-hanging-request", closedAfterMs: rec.closedAfterMs }) + "\n")
      })
      return // never respond
    }
    default:
      return replyText(res, body, rec, `FAKE-OK (unknown behaviour ${behavior}) from model=${body.model} (request #${rec.seq})`)
  }
}

function log(rec) {
  requests.push(rec)
  if (LOG) fs.appendFileSync(LOG, JSON.stringify(rec) + "\n")
}

function sendJson(res, status, value) {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(value))
}

const server = http.createServer((req, res) => {
  let raw = ""
  req.on("data", (d) => (raw += d))
  req.on("end", () => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    if (url.pathname === "/_fake/health") return sendJson(res, 200, { ok: true, port, requests: seq, hanging: hanging.size, queued: queue.length })
    if (url.pathname === "/_fake/requests") {
      const since = Number(url.searchParams.get("since") ?? 0)
      return sendJson(res, 200, requests.filter((r) => r.seq > since))
    }
    if (url.pathname === "/_fake/queue" && req.method === "POST") {
      let b
      try {
        b = JSON.parse(raw || "{}")
      } catch {
        return sendJson(res, 400, { error: "bad json" })
      }
      queue.push(...(Array.isArray(b.queue) ? b.queue : []))
      return sendJson(res, 200, { queued: queue.length })
    }
    if (url.pathname === "/_fake/budgets" && req.method === "GET") return sendJson(res, 200, { groups: budgets.groups, counts: budgets.counts() })
    if (url.pathname === "/_fake/budgets" && req.method === "POST") {
      let b
      try {
        b = JSON.parse(raw || "{}")
      } catch {
        return sendJson(res, 400, { error: "bad json" })
      }
      try {
        budgets = makeHiddenBudgets({ groups: Array.isArray(b.groups) ? b.groups : [] })
      } catch (e) {
        return sendJson(res, 400, { error: String(e instanceof Error ? e.message : e) })
      }
      return sendJson(res, 200, { groups: budgets.groups })
    }
    if (url.pathname === "/_fake/reset" && req.method === "POST") {
      requests = []
      queue = []
      directiveCounts = new Map()
      budgets = makeHiddenBudgets({ groups: [] })
      return sendJson(res, 200, { ok: true, seq })
    }
    if (url.pathname.endsWith("/models") && req.method === "GET") {
      return sendJson(res, 200, { object: "list", data: ["pool-a", "pool-b", "pool-c"].map((id) => ({ id, object: "model", owned_by: "fake" })) })
    }
    if (url.pathname.endsWith("/chat/completions") && req.method === "POST") {
      seq++
      if (seq > MAX_REQUESTS) return jsonError(res, 500, `fake: request budget of ${MAX_REQUESTS} exhausted`)
      let body
      try {
        body = JSON.parse(raw)
      } catch {
        return sendJson(res, 400, { error: { message: "bad json" } })
      }
      const msgs = Array.isArray(body.messages) ? body.messages : []
      const users = msgs.filter((m) => m.role === "user")
      const taskTool = (body.tools ?? []).find((x) => (x.function?.name ?? x.name) === "task")
      const rec = {
        seq,
        t: Date.now(),
        path: url.pathname,
        // providers configured with baseURL http://127.0.0.1:PORT/<provider>/v1 are told apart here
        provider: /^\/([^/]+)\/v1\//.exec(url.pathname)?.[1],
        model: body.model,
        stream: !!body.stream,
        firstUserText: textOf(users[0]?.content).slice(0, 500),
        lastUserText: textOf(users[users.length - 1]?.content).slice(0, 500),
        // the whole last user text (up to 20000 characters), e.g. a command's expanded template
        lastUserTextFull: textOf(users[users.length - 1]?.content).slice(0, 20000),
        nMessages: msgs.length,
        lastRole: msgs[msgs.length - 1]?.role,
        systemHead: textOf(msgs.find((m) => m.role === "system")?.content).slice(0, 160),
        // opencode-pool's coaching lines, wherever they are among the system messages
        coachLines: msgs
          .filter((m) => m.role === "system")
          .flatMap((m) => textOf(m.content).split("\n"))
          .filter((l) => l.startsWith("opencode-pool quota:")),
        tools: (body.tools ?? []).map((t) => t.function?.name ?? t.name),
        taskToolDescription: taskTool ? String(taskTool.function?.description ?? taskTool.description ?? "").slice(0, 4000) : undefined,
        headers: { "user-agent": req.headers["user-agent"], "x-session-affinity": req.headers["x-session-affinity"] }
      }
      return handleChat(req, res, body, rec)
    }
    sendJson(res, 404, { error: { message: `not found: ${req.method} ${url.pathname}` } })
  })
})

server.listen(PORT, "127.0.0.1", () => {
  port = server.address().port
  process.stdout.write(`FAKE_LLM_PORT=${port}\n`)
})

function shutdown() {
  for (const r of hanging) r.destroy()
  server.close(() => process.exit(0))
  setTimeout(() => process.exit(0), 1000).unref()
}
process.on("SIGTERM", shutdown)
process.on("SIGINT", shutdown)
if (PARENT_PID > 0) {
  setInterval(() => {
    try {
      process.kill(PARENT_PID, 0)
    } catch {
      shutdown()
    }
  }, 1000).unref()
}
