/**
 * opencode hooks → engine events. A `ManagedRuntime` owns the engine (its reaper, watcher and claim
 * file); each hook is a thin handler that reads its input through `events.ts`/`extract.ts` as untrusted
 * data and hands the engine plain values only. Every hook catches everything, except
 * `tool.execute.before` refusing a hand-named slot variant, which must fail the task call (SPEC §6.3)
 * and which no hostile input can suppress. After `dispose` the hooks do nothing.
 */
import type { Hooks } from "@opencode-ai/plugin"
import { Effect, Layer, ManagedRuntime } from "effect"
import type { JsonRecord } from "../core/json.js"
import type { Settings } from "../core/options.js"
import { makeDir } from "../layers/fs/dirs.js"
import { PoolEngineShell } from "../layers/pool/PoolEngineShell.js"
import { NotifyEngineShell } from "../layers/notify/NotifyEngineShell.js"
import { GatewayHttp } from "../layers/gateway/GatewayHttp.js"
import { Gateway } from "../services/gateway/Gateway.js"
import { soundsOn } from "../core/notify/sound.js"
import { NotifyEngine, type NotifyEngineService } from "../services/notify/NotifyEngine.js"
import { AppLog, type LogLevel } from "../services/opencode/AppLog.js"
import { PoolEngine, VariantRefused, type PoolEngineService } from "../services/pool/PoolEngine.js"
import { notifyInputsOf } from "./notifyEvents.js"
import { decodeBusEvent } from "../core/bus/decode.js"
import { causeLine } from "../core/causeLine.js"
import { installQuotaFetch, type FailureReport, type ResponseReport } from "./quotaFetch.js"
import { slotsOf } from "../core/engine/state.js"
import { appendIndex, bashCall, bashEnd, coachTarget, engineEventsOf, requestOf, taskCall, taskEndClaim, userMessageOf } from "./events.js"
import { heavyOf } from "../core/permits/heavy.js"
import { PermitGate, PermitWaitEnded } from "../services/permits/PermitGate.js"
import { Permits } from "../services/permits/Permits.js"
import { PermitGateShell } from "../layers/permits/PermitGateShell.js"
import { permitsLayer } from "../layers/permits/permitsLayer.js"
import { spawnGate } from "../core/spawn/handNamed.js"
import { promptTarget } from "../services/opencode/SessionPrompt.js"
import type { Applied } from "../core/engine/step.js"
import { assign, field, isPlainObject } from "../core/extract.js"
import { editedPaths, underDirectory } from "../core/context/edits.js"
import type { PoolServices } from "./services.js"
import { workable } from "./configObject.js"
import { ownFetchLine, POOL_STATUS_DESCRIPTION, type Handoff, type Sensing } from "./handoff.js"

export type { PoolServices } from "./services.js"

export interface HookOptions {
  readonly settings: Settings
  readonly warnings: ReadonlyArray<string>
  /** Created empty at start (SPEC §2.1); failures are silent. */
  readonly configDir?: string | undefined
  /** Where `OCPOOL_SOUND` is read (process.env by default). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** The boot entry's first config hook, done before the engine ran (src/plugin/boot.ts): bound again here. */
  readonly handoff?: Handoff | undefined
  /** The project directory (opencode's `directory`): the context map's root (issue 23); without it no refresh runs. */
  readonly directory?: string | undefined
}

export type EngineHooks = Hooks & { readonly engine: PoolEngineService; readonly notifications: NotifyEngineService; readonly sensing: Sensing }

/** A permit's reason: the command's first line, at most 200 characters. */
const reasonOf = (command: string): string => {
  const first = command.trim().split("\n", 1)[0] ?? ""
  return first.length > 200 ? `${first.slice(0, 199)}…` : first
}

/** Appends `line` to a tool's output text (guarded: a hostile output is left as it is). */
const appendOutput = (output: unknown, line: string): void => {
  const was = field(output, "output")
  if (typeof was !== "string") return
  assign(output, "output", was.endsWith("\n") || was === "" ? `${was}${line}` : `${was}\n${line}`)
}

/** How long a retry status waits for the error body of its session that is still being read (issue 19). */
const FAILURE_WAIT_MS = 500

/** Builds the hooks over the given layer (live in opencode, memory layers in tests). */
export const makeHooks = async (layer: Layer.Layer<PoolServices>, o: HookOptions): Promise<EngineHooks> => {
  if (o.configDir !== undefined) {
    makeDir(o.configDir, 0o777) // silent by design; never loops (Node's recursive mkdir does under /proc)
  }
  const notifyConfig = { sounds: soundsOn(o.settings.sound, (o.env ?? process.env).OCPOOL_SOUND), fade: o.settings.fade }
  const engines = Layer.mergeAll(PoolEngineShell(o.settings, o.warnings, o.directory), NotifyEngineShell(o.settings.notify, notifyConfig), GatewayHttp(o.settings.omniroute))
  const withEngines = Layer.provideMerge(engines, layer)
  // heavy-work permits (issue 21): the gate over the permits port, on the same shared state
  const gateLayer = PermitGateShell.pipe(Layer.provideMerge(permitsLayer(o.settings.permits)))
  const runtime = ManagedRuntime.make(Layer.provideMerge(gateLayer, withEngines))
  const engine = await runtime.runPromise(PoolEngine)
  const permitGate = await runtime.runPromise(PermitGate)
  const permits = await runtime.runPromise(Permits)
  const heavy = o.settings.heavy
  const notifications = await runtime.runPromise(NotifyEngine)
  const gateway = await runtime.runPromise(Gateway)
  let disposed = false
  const run = async <A>(eff: Effect.Effect<A, never, PoolServices>, what: string): Promise<A | undefined> => {
    if (disposed) return undefined
    return runtime
      .runPromise(eff.pipe(Effect.catchAllCause((cause) => Effect.as(Effect.flatMap(AppLog, (l) => l.log("error", `${what} failed: ${causeLine(cause)}`)), undefined))))
      .catch(() => undefined)
  }
  const log = (level: LogLevel, message: string) => run(Effect.flatMap(AppLog, (l) => l.log(level, message)), "log")

  // quota sensing (issue 12): every wrapped provider's responses go to the engine, never awaited
  const report = (r: ResponseReport): void => {
    void run(engine.apply({ type: "response", ...r, reserve: o.settings.quotaReserve }), "quota sensing")
  }
  // an error answer's body (issue 19) reaches the engine before the retry status that follows it
  const failing = new Map<string, Promise<unknown>>()
  const fail = (f: FailureReport): void => {
    const done: Promise<unknown> = f.body.then((body) => run(engine.apply({ type: "failed", session: f.session, status: f.status, headers: f.headers, body }), "failure sensing"))
    failing.set(f.session, done)
    void done.finally(() => {
      if (failing.get(f.session) === done) failing.delete(f.session)
    })
  }
  /** Waits (at most FAILURE_WAIT_MS) for the error body of `session` that is still being read. */
  const failureRead = async (session: string): Promise<void> => {
    const pending = failing.get(session)
    if (pending === undefined) return
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([pending, new Promise((resolve) => (timer = setTimeout(resolve, FAILURE_WAIT_MS)))])
    clearTimeout(timer)
  }
  const wrappers = o.handoff?.wrappers ?? new WeakSet<object>()
  const ownFetchTold = new Set<string>(o.handoff?.ownFetch)
  const sense = async (config: JsonRecord): Promise<void> => {
    const state = await run(engine.state, "quota sensing")
    if (state === undefined) return
    let own: ReadonlyArray<string> = []
    try {
      own = installQuotaFetch(config, slotsOf(state), report, wrappers, fail)
    } catch (e) {
      return void (await log("error", `quota sensing failed: ${e instanceof Error ? e.message : String(e)}`))
    }
    for (const p of own) {
      if (ownFetchTold.has(p)) continue
      ownFetchTold.add(p)
      await log("info", ownFetchLine(p))
    }
  }

  /** Each switch to a fallback (US-50) is one notification, when notifications exist. */
  const announceSwitches = async (applied: ReadonlyArray<Applied | undefined>): Promise<void> => {
    for (const out of applied) {
      for (const sw of out?.switches ?? []) await run(notifications.apply({ type: "switched", session: sw.session, text: sw.text }), "notification")
    }
  }

  if (o.handoff !== undefined) {
    // the boot's config hook injected this object from the same pool: binding it again writes the same
    // agents, says what that hook found, keeps it for reloads and runs the price advisory, all after the hook
    for (const w of o.handoff.once) await log("warn", w)
    await run(engine.configure(o.handoff.config), "config injection")
    for (const l of o.handoff.lines) await log(l.level, l.message)
  }

  return {
    engine,
    notifications,
    sensing: { report, fail },
    config: async (input) => {
      if (disposed || !isPlainObject(input)) return
      if (!workable(input)) return void (await log("error", "config injection failed: opencode's config object cannot be read or written"))
      await run(engine.configure(input), "config injection")
      await run(gateway.register(input), "omniroute")
      await sense(input)
    },
    "tool.execute.before": async (input, output) => {
      if (disposed) return
      if (heavy !== false) {
        // a heavy bash command waits here for its permit; its command is never rewritten (issue 21)
        const bash = bashCall(input, field(output, "args"))
        if (bash !== undefined) {
          const h = heavyOf(bash.command, heavy)
          if (h === undefined) return
          const gate = await run(permitGate.before({ session: bash.session, call: bash.call, command: reasonOf(bash.command), budget: h.budget, weight: h.weight }), "heavy-work permit")
          // the session was aborted while it waited: refused here, or opencode would still start it (US-51)
          if (gate === "ended") throw new PermitWaitEnded(bash.session)
          return
        }
      }
      const task = taskCall(input, output)
      if (task === undefined) return
      const gate = spawnGate(task.agent, task.session, task.call)
      if (gate._tag === "pass") return
      if (gate._tag === "refuse") {
        await log("warn", gate.log)
        throw new VariantRefused(gate.refusal.requested, gate.refusal.base)
      }
      // the engine sees plain values only; the routed agent is copied back into opencode's args
      const args: Record<string, unknown> = { subagent_type: task.agent, ...(task.taskId === undefined ? {} : { task_id: task.taskId }) }
      const outcome = await runtime
        .runPromise(engine.beforeTask(gate.session, gate.call, args).pipe(Effect.catchAllDefect(() => Effect.void), Effect.either))
        .catch(() => undefined)
      if (outcome?._tag === "Left") throw outcome.left
      // a variant name is refused even when the engine failed before it could say so
      if (gate.refusal !== undefined) throw new VariantRefused(gate.refusal.requested, gate.refusal.base)
      const routed = args.subagent_type
      if (routed !== task.agent && !assign(task.args, "subagent_type", routed)) {
        await log("error", `routing could not rewrite the task call ${gate.session}:${gate.call} to ${String(routed)}; spawn unchanged`)
      }
    },
    "tool.execute.after": async (input, output) => {
      const bash = bashEnd(input)
      if (bash !== undefined) {
        const line = await run(permitGate.after(bash.session, bash.call), "heavy-work permit")
        if (line !== undefined) appendOutput(output, line)
        return
      }
      const claim = taskEndClaim(input)
      if (claim !== undefined) return void (await run(engine.apply({ type: "taskEnd", claim, ok: true }), "release"))
      // the files an edit, write or patch tool wrote queue a context map refresh (issue 23)
      if (!o.settings.contextMap.enabled) return
      const dir = o.directory
      const paths = editedPaths(field(input, "tool"), field(input, "args")).map((p) => (dir === undefined ? p : underDirectory(dir, p)))
      const session = field(input, "sessionID")
      if (paths.length > 0 && typeof session === "string") await run(engine.apply({ type: "contextEdit", session, paths }), "context map")
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (disposed || !o.settings.coach) return
      let at: ReturnType<typeof coachTarget>
      try {
        at = coachTarget(input, output)
      } catch {
        return // a hostile shape: no coaching, never an exception into opencode
      }
      if (at === undefined) return
      const out = await run(engine.apply({ type: "coach", session: at.session, model: at.model }), "coaching")
      if (out?.coach === undefined) return
      // the end is read again: the array may have grown while the engine decided; every read is guarded
      const end = appendIndex(at.system)
      if (end === undefined || !assign(at.system, String(end), out.coach)) {
        await log("error", `coaching could not add its line to the system prompt of ${at.session}`)
      }
    },
    "chat.params": async (input) => {
      const r = requestOf(input)
      if (r !== undefined) await run(engine.apply({ type: "request", ...r }), "chat.params")
    },
    "chat.message": async (input, output) => {
      if (disposed) return
      let m: ReturnType<typeof userMessageOf>
      try {
        m = userMessageOf(input, output)
      } catch {
        return // a hostile shape: the message runs as sent
      }
      if (m === undefined) return
      const out = await run(engine.apply({ type: "message", session: m.session, model: m.model, agent: m.agent }), "fallback")
      if (out?.model !== undefined && !assign(m.message, "model", promptTarget(out.model))) {
        await log("error", `fallback could not rewrite the message of ${m.session} to ${out.model}; it runs on ${m.model}`)
      }
    },
    event: async (input) => {
      try {
        const event = field(input, "event")
        // the notification decision first: it is synchronous, so concurrent events keep their order
        // decoded once; each machine takes its own events from it
        const bus = decodeBusEvent(event)
        const inputs = notifyInputsOf(bus)
        const notified = inputs.length > 0 ? run(Effect.forEach(inputs, notifications.apply, { discard: true }), "notification") : undefined
        const events = engineEventsOf(bus)
        for (const e of events) if (e.type === "retry") await failureRead(e.session)
        if (events.length > 0) {
          const applied = await run(Effect.forEach(events, engine.apply), "event")
          await announceSwitches(applied ?? [])
          // an abort or error of a session ends its permit waits at once and releases what it holds
          for (const e of events) if (e.type === "error") void run(permitGate.sessionEnded(e.session), "heavy-work permit")
        }
        await notified
      } catch {
        // never escapes
      }
    },
    tool: {
      pool_status: {
        description: POOL_STATUS_DESCRIPTION,
        args: {},
        execute: async () => {
          // the heavy-work budgets (issue 21) with the capacities this process knows, over the view's one snapshot
          const text = await run(engine.statusText(permits.budgets), "pool_status")
          return text ?? "opencode-pool: status unavailable"
        }
      }
    },
    dispose: async () => {
      if (disposed) return
      disposed = true
      await runtime.dispose().catch(() => undefined)
    }
  } as EngineHooks
}
