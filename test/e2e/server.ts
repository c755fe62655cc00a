/**
 * Starts the real `opencode serve` offline in an isolated HOME, and drives it over HTTP + SSE.
 *
 * - HOME and every XDG_* directory live in a fresh temp directory; nothing of the machine's own
 *   opencode config, data or cache is read or written.
 * - Both config directories (`$XDG_CONFIG_HOME/opencode` and `<project>/.opencode`) are seeded with
 *   `node_modules/` and a `package-lock.json` listing `@opencode-ai/plugin`, so opencode's background
 *   npm install at instance start sees nothing to do (offline it would block plugin loading ~70 s).
 * - The offline switches (`OPENCODE_DISABLE_MODELS_FETCH=1`, …) keep it off the network; it only
 *   talks to 127.0.0.1.
 * - Every wait is bounded; the server is stopped by pid (TERM, then KILL after 5 s) in `stop()`, and
 *   killed on process exit if a test forgot.
 *
 * Directory scoping: opencode serves one "instance" per project directory and picks it, per request,
 * from `?directory=` (first), the `x-opencode-directory` header, or the server's cwd. The harness
 * starts the server with cwd = the project directory AND puts `?directory=<projectDir>` plus the
 * header (URI-encoded, as the official SDK does) on every request, the `/event` stream included.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { isAbsolute, join } from "node:path"
import { pathToFileURL } from "node:url"
import type { OpencodeConfig } from "./config.js"
import { freePort, httpOk, isRunning, sleep, stopChild, track } from "./processes.js"

/** A plugin entry as in opencode.json: a spec, or `[spec, options]`. Absolute paths become file:// URLs. */
export type PluginEntry = string | readonly [string, Record<string, unknown>]

/** The env switches that keep opencode 1.18.33 offline (see the reference README). */
export const OFFLINE_ENV: Readonly<Record<string, string>> = {
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
  OPENCODE_DISABLE_AUTOCOMPACT: "1"
}

export interface HarnessDirs {
  /** The temp directory that holds everything the harness created (removed by stop()). */
  readonly workDir: string
  readonly home: string
  readonly configHome: string
  readonly dataHome: string
  readonly stateHome: string
  readonly cacheHome: string
  readonly projectDir: string
  /** opencode-pool's default state directory, `$XDG_STATE_HOME/opencode-pool` (or env OCPOOL_STATE_DIR). */
  readonly stateDir: string
  /** opencode's database, `$XDG_DATA_HOME/opencode/opencode.db`. */
  readonly dbPath: string
}

export interface StartOpencodeOptions {
  /** The native binary from ensureOpencode(). */
  readonly binary: string
  /** The opencode.json content, written to `<projectDir>/opencode.json`. */
  readonly configJson: OpencodeConfig
  /** Appended to `configJson.plugin`. Absolute paths are turned into file:// URLs. */
  readonly pluginPaths?: ReadonlyArray<PluginEntry>
  /** Merged over the inherited and offline env; `undefined` removes a variable. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Default `<workDir>/proj`. It is created if missing; opencode.json and .opencode/ are written into it. */
  readonly projectDir?: string
  /** Reuse an existing isolated HOME (e.g. a second server sharing state with a first one). */
  readonly home?: string
  /** Runs after the directories are made and seeded, before opencode starts (write pool files, …). */
  readonly setup?: (dirs: HarnessDirs) => void | Promise<void>
  /** Bound on start-up (health + instance bootstrap); default 60 s. */
  readonly startTimeoutMs?: number
  /** opencode's --log-level; default INFO. Logs go to `<workDir>/serve.log`. */
  readonly logLevel?: "DEBUG" | "INFO" | "WARN" | "ERROR"
  /** Keep the temp directory after stop() (also: env OCPOOL_E2E_KEEP=1). */
  readonly keepTemp?: boolean
}

export interface HarnessEvent {
  /** Index in `events` (use it as an "after" mark). */
  readonly i: number
  /** Epoch ms when the harness received it. */
  readonly at: number
  readonly type: string
  readonly properties: Record<string, any>
  readonly raw: unknown
}

export interface HttpResult<A = any> {
  readonly status: number
  readonly body: A
  readonly headers: Readonly<Record<string, string>>
  readonly ms: number
}

export interface RequestOptions {
  /** Per-request bound; default 30 s. */
  readonly timeoutMs?: number
  /** Override the directory scope; `false` sends none (global routes). */
  readonly directory?: string | false
}

export interface PromptOptions {
  readonly agent?: string
  /** `"provider/model"` or `{providerID, modelID}`. */
  readonly model?: string | { readonly providerID: string; readonly modelID: string }
  /** Extra body keys for POST /session/:id/prompt_async (system, tools, noReply, …). */
  readonly extra?: Record<string, unknown>
}

export interface SessionInfo {
  readonly id: string
  readonly parentID?: string
  readonly title?: string
  readonly [key: string]: unknown
}

export interface MessageWithParts {
  readonly info: { readonly id: string; readonly role: string; readonly [key: string]: any }
  readonly parts: ReadonlyArray<{ readonly type: string; readonly [key: string]: any }>
}

export type SessionStatus = { readonly type: "busy" | "idle" | "retry"; readonly [key: string]: unknown }

/** A pending permission ask (GET /permission; also the `permission.asked` event's properties). */
export interface PermissionRequest {
  /** `per_…` */
  readonly id: string
  /** The session whose tool asked (a subagent's own session for a child). */
  readonly sessionID: string
  /** The permission key, e.g. `bash`. */
  readonly permission: string
  /** e.g. the bash command. */
  readonly patterns: ReadonlyArray<string>
  readonly metadata: Record<string, unknown>
  /** What `always` would allow, e.g. `["echo *"]`. */
  readonly always: ReadonlyArray<string>
  readonly tool?: { readonly messageID: string; readonly callID: string }
  readonly [key: string]: unknown
}

export type PermissionReply = "once" | "always" | "reject"

/** A pending question (GET /question; also the `question.asked` event's properties). */
export interface QuestionRequest {
  /** `que_…` */
  readonly id: string
  readonly sessionID: string
  readonly questions: ReadonlyArray<{
    readonly question: string
    readonly header: string
    readonly options: ReadonlyArray<{ readonly label: string; readonly description: string }>
    readonly multiple?: boolean
    readonly custom?: boolean
    readonly [key: string]: unknown
  }>
  readonly tool?: { readonly messageID: string; readonly callID: string }
  readonly [key: string]: unknown
}

export interface WaitForTypeOptions {
  /** Only events at index ≥ since (default 0): take `mark()` before acting. */
  readonly since?: number
  /** Only events whose `properties.sessionID` is this. */
  readonly sessionId?: string
}

export interface OpencodeHandle extends HarnessDirs {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly port: number
  readonly pid: number
  readonly logPath: string
  /** Every event of `GET /event` (this project's instance), in arrival order. */
  readonly events: ReadonlyArray<HarnessEvent>
  /** `events.length`: take it BEFORE an action, then wait for events after it. */
  mark(): number
  /** Resolves with the first event at index ≥ `since` (default 0) that matches; rejects after `timeoutMs`. */
  waitForEvent(predicate: (e: HarnessEvent) => boolean, timeoutMs: number, since?: number): Promise<HarnessEvent>
  /** A directory-scoped HTTP request; JSON in, JSON (or text) out. Never throws on HTTP errors. */
  request<A = any>(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<HttpResult<A>>
  /** POST /session; throws unless 200. */
  createSession(body?: { readonly title?: string; readonly parentID?: string }): Promise<SessionInfo>
  /** POST /session/:id/prompt_async (returns at once); resolves with the event mark taken before sending. */
  prompt(sessionId: string, text: string, options?: PromptOptions): Promise<number>
  /** Waits for `busy` then `idle` of this session, both after event index `afterIndex` (session.idle is sent 1–3 times per turn). */
  waitIdle(sessionId: string, afterIndex: number, timeoutMs: number): Promise<HarnessEvent>
  /** GET /session/:id/message */
  messages(sessionId: string): Promise<ReadonlyArray<MessageWithParts>>
  /** GET /session/status: busy and retry sessions only (idle ones are absent). */
  status(): Promise<Readonly<Record<string, SessionStatus>>>
  /** GET /session/:id/children */
  children(sessionId: string): Promise<ReadonlyArray<SessionInfo>>
  /** POST /session/:id/abort */
  abort(sessionId: string): Promise<HttpResult<boolean>>
  /** GET /permission: the pending permission asks of this instance (all sessions, children included). Throws unless 200. */
  permissions(): Promise<ReadonlyArray<PermissionRequest>>
  /** POST /permission/:id/reply `{reply, message?}` (default `once`); opencode answers `200 true`. Never throws on HTTP errors. */
  replyPermission(requestId: string, reply?: PermissionReply, message?: string): Promise<HttpResult<boolean>>
  /** GET /question: the pending questions of this instance. Throws unless 200. */
  questions(): Promise<ReadonlyArray<QuestionRequest>>
  /** POST /question/:id/reply `{answers}` (default `[["A"]]`: one list of labels per question); `200 true`. Never throws on HTTP errors. */
  replyQuestion(requestId: string, answers?: ReadonlyArray<ReadonlyArray<string>>): Promise<HttpResult<boolean>>
  /** POST /question/:id/reject (no body); `200 true`. Never throws on HTTP errors. */
  rejectQuestion(requestId: string): Promise<HttpResult<boolean>>
  /** The first event of this bus `type` (e.g. `permission.asked`) at index ≥ `since`, of `sessionId` if given; rejects after `timeoutMs`. */
  waitForType(type: string, timeoutMs: number, options?: WaitForTypeOptions): Promise<HarnessEvent>
  /** opencode's own log (stdout + stderr, --print-logs). */
  readLog(): string
  /** True while the opencode process runs. */
  running(): boolean
  /** Stops SSE, then opencode by pid (TERM, KILL after 5 s); removes the temp dir unless kept. Idempotent. */
  stop(): Promise<void>
}

const DEFAULT_START_TIMEOUT_MS = 60_000

/** Exactly as run-e2e.sh: an existing node_modules/ and a lock whose root lists every dependency. */
export const seedConfigDir = (dir: string): void => {
  mkdirSync(join(dir, "node_modules"), { recursive: true })
  writeFileSync(join(dir, "package.json"), JSON.stringify({ dependencies: { "@opencode-ai/plugin": "*" } }) + "\n")
  writeFileSync(
    join(dir, "package-lock.json"),
    JSON.stringify({ name: "oc-config", lockfileVersion: 3, requires: true, packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } } }) + "\n"
  )
}

const toPluginSpec = (spec: string): string => (isAbsolute(spec) ? pathToFileURL(spec).href : spec)

/** Applies `pluginPaths` to a config (absolute paths → file:// URLs; `[spec, options]` kept as a pair). */
export const withPlugins = (config: OpencodeConfig, entries: ReadonlyArray<PluginEntry>): OpencodeConfig => {
  if (entries.length === 0) return config
  const existing = Array.isArray(config["plugin"]) ? (config["plugin"] as ReadonlyArray<unknown>) : []
  const added = entries.map((e) => (typeof e === "string" ? toPluginSpec(e) : [toPluginSpec(e[0]), e[1]]))
  return { ...config, plugin: [...existing, ...added] }
}

const DESKTOP_AND_SSH = new Set(["DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"])

export const inheritedEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    // Never leak the machine's opencode/opencode-pool settings into the isolated server, nor its desktop
    // session (a developer's desktop would get the test servers' popups) or its SSH session (it would
    // send them over the hop): a test that wants either passes it in `env`.
    if (v === undefined || k.startsWith("OPENCODE_") || k.startsWith("OCPOOL_") || k.startsWith("XDG_") || DESKTOP_AND_SSH.has(k)) continue
    env[k] = v
  }
  return env
}

const tail = (text: string, n = 60): string => text.split("\n").slice(-n).join("\n")

const parseBody = (text: string): unknown => {
  if (text === "") return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export const startOpencode = async (options: StartOpencodeOptions): Promise<OpencodeHandle> => {
  const startedAt = Date.now()
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS
  const deadline = startedAt + startTimeoutMs
  const keep = options.keepTemp === true || process.env["OCPOOL_E2E_KEEP"] === "1"

  // ---- directories
  const workDir = mkdtempSync(join(tmpdir(), "ocpool-e2e-"))
  const home = options.home ?? join(workDir, "home")
  const configHome = join(home, ".config")
  const dataHome = join(home, ".local", "share")
  const stateHome = join(home, ".local", "state")
  const cacheHome = join(home, ".cache")
  const projectDir = options.projectDir ?? join(workDir, "proj")
  for (const d of [configHome, dataHome, stateHome, cacheHome, projectDir]) mkdirSync(d, { recursive: true })
  seedConfigDir(join(configHome, "opencode"))
  seedConfigDir(join(projectDir, ".opencode"))
  writeFileSync(join(projectDir, "opencode.json"), JSON.stringify(withPlugins(options.configJson, options.pluginPaths ?? []), null, 2) + "\n")

  const env: Record<string, string> = {
    ...inheritedEnv(),
    HOME: home,
    XDG_CONFIG_HOME: configHome,
    XDG_DATA_HOME: dataHome,
    XDG_STATE_HOME: stateHome,
    XDG_CACHE_HOME: cacheHome,
    ...OFFLINE_ENV
  }
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k]
    else env[k] = v
  }
  const dirs: HarnessDirs = {
    workDir,
    home,
    configHome,
    dataHome,
    stateHome,
    cacheHome,
    projectDir,
    stateDir: env["OCPOOL_STATE_DIR"] ?? join(stateHome, "opencode-pool"),
    dbPath: join(dataHome, "opencode", "opencode.db")
  }
  try {
    await options.setup?.(dirs)
  } catch (e) {
    if (!keep) rmSync(workDir, { recursive: true, force: true })
    throw e
  }

  // ---- process
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const logPath = join(workDir, "serve.log")
  const logFd = openSync(logPath, "a")
  const args = ["serve", "--hostname", "127.0.0.1", "--port", String(port), "--print-logs", "--log-level", options.logLevel ?? "INFO"]
  // setpriv --pdeathsig: the kernel kills opencode if this (test) process dies without cleaning up.
  const usePdeathsig = process.platform === "linux" && existsSync("/usr/bin/setpriv")
  let child: ChildProcess
  try {
    child = usePdeathsig
      ? spawn("/usr/bin/setpriv", ["--pdeathsig", "KILL", "--", options.binary, ...args], { cwd: projectDir, env, stdio: ["ignore", logFd, logFd] })
      : spawn(options.binary, args, { cwd: projectDir, env, stdio: ["ignore", logFd, logFd] })
  } finally {
    closeSync(logFd)
  }
  track(child)
  const pid = child.pid ?? -1
  const readLog = (): string => {
    try {
      return readFileSync(logPath, "utf8")
    } catch {
      return ""
    }
  }

  const events: Array<HarnessEvent> = []
  const waiters = new Set<{ readonly pred: (e: HarnessEvent) => boolean; readonly resolve: (e: HarnessEvent) => void }>()
  const sse = new AbortController()
  let stopped: Promise<void> | undefined

  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      sse.abort()
      await stopChild(child)
      if (!keep) rmSync(workDir, { recursive: true, force: true })
    })()
    return stopped
  }

  const fail = async (what: string): Promise<never> => {
    const log = readLog()
    await stop()
    throw new Error(`opencode ${what} (pid ${pid}, port ${port}, after ${Date.now() - startedAt} ms)\n--- serve.log (tail) ---\n${tail(log)}`)
  }

  const scope = (path: string, directory: string | false): string => {
    const u = new URL(path, url)
    if (directory !== false && !u.searchParams.has("directory")) u.searchParams.set("directory", directory)
    return u.href
  }
  const scopeHeaders = (directory: string | false): Record<string, string> =>
    directory === false ? {} : { "x-opencode-directory": encodeURIComponent(directory) }

  const request = async <A = any>(method: string, path: string, body?: unknown, ro: RequestOptions = {}): Promise<HttpResult<A>> => {
    const directory = ro.directory ?? projectDir
    const t0 = Date.now()
    const res = await fetch(scope(path, directory), {
      method,
      headers: { ...scopeHeaders(directory), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(ro.timeoutMs ?? 30_000)
    })
    const text = await res.text()
    return { status: res.status, body: parseBody(text) as A, headers: Object.fromEntries(res.headers.entries()), ms: Date.now() - t0 }
  }

  // ---- health: a request that arrives while opencode is still binding is never answered, so every
  // poll has a short timeout of its own.
  for (;;) {
    if (!isRunning(child)) return fail(`exited early (code ${child.exitCode}, signal ${child.signalCode})`)
    if (await httpOk(`${url}/global/health`, 500)) break
    if (Date.now() >= deadline) return fail(`was not healthy within ${startTimeoutMs} ms`)
    await sleep(100)
  }
  // ---- the first directory-scoped request bootstraps the instance (config, plugins, tools)
  try {
    const r = await request("GET", "/agent", undefined, { timeoutMs: Math.max(1_000, deadline - Date.now()) })
    if (r.status !== 200) return fail(`instance bootstrap: GET /agent -> ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`)
  } catch (e) {
    return fail(`instance bootstrap failed: ${String(e)}`)
  }

  // ---- SSE: GET /event for this directory
  const parseBlock = (block: string): void => {
    const data = block
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trimStart())
      .join("\n")
    if (data === "") return
    const raw = parseBody(data)
    const obj = typeof raw === "object" && raw !== null ? (raw as Record<string, any>) : {}
    const ev: HarnessEvent = {
      i: events.length,
      at: Date.now(),
      type: typeof obj["type"] === "string" ? obj["type"] : "unparsed",
      properties: typeof obj["properties"] === "object" && obj["properties"] !== null ? obj["properties"] : {},
      raw
    }
    events.push(ev)
    for (const w of [...waiters]) {
      if (w.pred(ev)) {
        waiters.delete(w)
        w.resolve(ev)
      }
    }
  }
  let sseRes: Response
  // Bound only the wait for the response headers: the body is a stream that lives until stop().
  const connectTimer = setTimeout(() => sse.abort(), Math.max(1_000, deadline - Date.now()))
  try {
    sseRes = await fetch(scope("/event", projectDir), {
      headers: { accept: "text/event-stream", ...scopeHeaders(projectDir) },
      signal: sse.signal
    })
  } catch (e) {
    return fail(`GET /event failed: ${String(e)}`)
  } finally {
    clearTimeout(connectTimer)
  }
  if (!sseRes.ok || sseRes.body === null) return fail(`GET /event -> ${sseRes.status}`)
  const reader = sseRes.body.getReader()
  void (async () => {
    const dec = new TextDecoder()
    let buf = ""
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        buf += dec.decode(value, { stream: true }).replace(/\r\n/g, "\n")
        let k: number
        while ((k = buf.indexOf("\n\n")) >= 0) {
          parseBlock(buf.slice(0, k))
          buf = buf.slice(k + 2)
        }
      }
    } catch {
      // aborted by stop(), or the server went away
    }
  })()

  const waitForEvent = (pred: (e: HarnessEvent) => boolean, timeoutMs: number, since = 0): Promise<HarnessEvent> => {
    const hit = events.find((e) => e.i >= since && pred(e))
    if (hit !== undefined) return Promise.resolve(hit)
    return new Promise((resolve, reject) => {
      const w = {
        pred: (e: HarnessEvent) => e.i >= since && pred(e),
        resolve: (e: HarnessEvent) => {
          clearTimeout(timer)
          resolve(e)
        }
      }
      const timer = setTimeout(() => {
        if (!waiters.delete(w)) return
        const recent = events
          .slice(Math.max(since, events.length - 15))
          .map((e) => `#${e.i} ${e.type} ${JSON.stringify(e.properties).slice(0, 160)}`)
          .join("\n  ")
        reject(new Error(`timeout (${timeoutMs} ms) waiting for an event after #${since}; opencode ${isRunning(child) ? "running" : "exited"}; last events:\n  ${recent}`))
      }, timeoutMs)
      waiters.add(w)
    })
  }

  try {
    // The stream opens with server.connected; from then on no event of ours is missed.
    await waitForEvent((e) => e.type === "server.connected", Math.max(1_000, Math.min(10_000, deadline - Date.now())))
  } catch (e) {
    return fail(`SSE stream did not connect: ${String(e)}`)
  }

  const sessionOf = (e: HarnessEvent): unknown => e.properties["sessionID"]
  const ok = <A>(what: string, r: HttpResult<A>, codes: ReadonlyArray<number> = [200]): A => {
    if (!codes.includes(r.status)) throw new Error(`${what} -> ${r.status} ${JSON.stringify(r.body).slice(0, 1000)}`)
    return r.body
  }

  return {
    ...dirs,
    url,
    port,
    pid,
    logPath,
    events,
    mark: () => events.length,
    waitForEvent,
    request,
    createSession: async (body = {}) => ok("POST /session", await request<SessionInfo>("POST", "/session", body)),
    prompt: async (sessionId, text, po = {}) => {
      const at = events.length
      const model =
        typeof po.model === "string"
          ? (() => {
              const slash = po.model.indexOf("/")
              if (slash <= 0) throw new Error(`model must be "provider/model", got ${po.model}`)
              return { providerID: po.model.slice(0, slash), modelID: po.model.slice(slash + 1) }
            })()
          : po.model
      const body = {
        parts: [{ type: "text", text }],
        ...(po.agent !== undefined ? { agent: po.agent } : {}),
        ...(model !== undefined ? { model: { providerID: model.providerID, modelID: model.modelID } } : {}),
        ...po.extra
      }
      ok(`POST /session/${sessionId}/prompt_async`, await request("POST", `/session/${encodeURIComponent(sessionId)}/prompt_async`, body), [200, 204])
      return at
    },
    waitIdle: async (sessionId, afterIndex, timeoutMs) => {
      const until = Date.now() + timeoutMs
      const busy = await waitForEvent(
        (e) => e.type === "session.status" && sessionOf(e) === sessionId && e.properties["status"]?.type === "busy",
        timeoutMs,
        afterIndex
      )
      return waitForEvent(
        (e) => sessionOf(e) === sessionId && (e.type === "session.idle" || (e.type === "session.status" && e.properties["status"]?.type === "idle")),
        Math.max(1, until - Date.now()),
        busy.i
      )
    },
    messages: async (sessionId) => ok("GET messages", await request<ReadonlyArray<MessageWithParts>>("GET", `/session/${encodeURIComponent(sessionId)}/message`)),
    status: async () => ok("GET /session/status", await request<Record<string, SessionStatus>>("GET", "/session/status")),
    children: async (sessionId) => ok("GET children", await request<ReadonlyArray<SessionInfo>>("GET", `/session/${encodeURIComponent(sessionId)}/children`)),
    abort: (sessionId) => request<boolean>("POST", `/session/${encodeURIComponent(sessionId)}/abort`),
    permissions: async () => ok("GET /permission", await request<ReadonlyArray<PermissionRequest>>("GET", "/permission")),
    replyPermission: (requestId, reply = "once", message) =>
      request<boolean>("POST", `/permission/${encodeURIComponent(requestId)}/reply`, { reply, ...(message !== undefined ? { message } : {}) }),
    questions: async () => ok("GET /question", await request<ReadonlyArray<QuestionRequest>>("GET", "/question")),
    replyQuestion: (requestId, answers = [["A"]]) => request<boolean>("POST", `/question/${encodeURIComponent(requestId)}/reply`, { answers }),
    rejectQuestion: (requestId) => request<boolean>("POST", `/question/${encodeURIComponent(requestId)}/reject`),
    waitForType: (type, timeoutMs, wo = {}) =>
      waitForEvent((e) => e.type === type && (wo.sessionId === undefined || sessionOf(e) === wo.sessionId), timeoutMs, wo.since ?? 0),
    readLog,
    running: () => isRunning(child),
    stop
  }
}

/** Concatenated text parts of a message. */
export const textOf = (m: MessageWithParts | undefined): string =>
  (m?.parts ?? [])
    .filter((p) => p.type === "text")
    .map((p) => String(p["text"] ?? ""))
    .join("")
