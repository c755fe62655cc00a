/**
 * `ocpool status --watch` and `ocpool top` (issue 24): the live view. One port to the shared state is
 * kept open; its `changes` stream (the state directory watched, PostgreSQL's NOTIFY) wakes a re-read,
 * at most 10 redraws a second. A countdown on screen is redrawn when its next second is due, the
 * header's clock when its next minute is; nothing polls.
 *
 * On a terminal: a full-screen view (core/view/live.ts) on the alternate screen, keys read raw from
 * standard input, the terminal restored on every way out (q, a signal, an error, a closed terminal).
 * Not on a terminal, or with `--json`: one status object per line (NDJSON) each time the status
 * changed. A signal ends it with 128 + the signal's number; a closed stdout ends it quietly, and so does
 * a pipe whose reader went away while nothing was written (layers/process/pipeReaders.ts).
 */
import { LiveTerminal, type LiveTerminalService } from "../services/view/LiveTerminal.js"
import { liveTerminalProcess } from "../layers/view/LiveTerminalProcess.js"
import { Clock, Context, Effect, Layer, Option, Queue, Stream } from "effect"
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readSync, statSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { liveFrame, nextTickIn } from "../core/view/live.js"
import { visibleWidth } from "../core/view/width.js"
import { applyKey, INITIAL_UI, keyActions, type ViewUi } from "../core/view/keys.js"
import { recentDecisions } from "../core/view/recentDecisions.js"
import { printableJson } from "../core/printable.js"
import type { StatusView } from "../core/status.js"
import { dirChanges } from "../layers/fs/dirChanges.js"
import { ALL_RECORDS, SharedState } from "../services/state/SharedState.js"
import { StateUnreadable } from "./errors.js"
import { ExitWith } from "./notify.js"
import { colourOn, CurrentIo, writeTo, type CliIo } from "./output.js"
import { ownSignals } from "./shared/ownSignals.js"
import { cliPoolSources, openState, portOf, readThrough, stateOf, type OpenedState } from "./stateView.js"
import { checkPoolFile, viewBudgets, viewOfState, type StatusFlags } from "./statusRun.js"
import type { ResolvedPool } from "../core/source.js"
import { configDir } from "../layers/pool/PoolConfigFile.js"
import type { BudgetInfo } from "../core/permits/view.js"
import { stdoutReaderGone } from "../layers/process/pipeReaders.js"

export interface WatchFlags extends StatusFlags {
  /** A trace being recorded (its `<trace>.decisions.jsonl` is tailed for the last decisions). */
  readonly trace: string | undefined
}

/** At most 10 redraws a second. */
const MIN_FRAME_MS = 100
/** Decisions shown at most. */
const DECISION_LINES = 8
/** How much of the decisions file's end is read. */
const TAIL_BYTES = 16 << 10

type Event =
  | { readonly _tag: "Changed" }
  | { readonly _tag: "Pool" }
  | { readonly _tag: "Decisions" }
  | { readonly _tag: "Reopen" }
  | { readonly _tag: "Keys"; readonly text: string }
  | { readonly _tag: "Resize" }
  | { readonly _tag: "Stop"; readonly code: number }

const CHANGED: Event = { _tag: "Changed" }
const DECISIONS: Event = { _tag: "Decisions" }
const REOPEN: Event = { _tag: "Reopen" }
const POOL: Event = { _tag: "Pool" }

/**
 * The pool the view shows (issue 34): resolved once, and again only after one of its files changed
 * (the file `--pool` names, `pool.txt`/`pool.json` in the user config directory), never per redraw.
 */
interface PoolMemo {
  readonly current: () => ResolvedPool
  /** One element each time a watched pool file may have changed. */
  readonly changes: Stream.Stream<void>
  readonly changed: () => void
}

const poolMemo = (poolFile: string | undefined): PoolMemo => {
  let { pool, watched } = cliPoolSources(poolFile)
  let stale = false
  const config = configDir()
  // the user config directory: its pool files; a named file: its own name in its directory (an editor replaces it)
  const changes = watched.map((p) => {
    const [dir, names] = p === config ? [p, ["pool.txt", "pool.json"]] : [dirname(p), [basename(p)]]
    return Stream.filter(dirChanges(dir), (f) => f === undefined || names.includes(f))
  })
  return {
    current: () => {
      if (stale) {
        pool = cliPoolSources(poolFile).pool
        stale = false
      }
      return pool
    },
    changes: Stream.as(Stream.mergeAll(changes, { concurrency: "unbounded" }), undefined),
    changed: () => void (stale = true)
  }
}

/**
 * The recorded decisions file of the trace: `--trace FILE`, else `$OCPOOL_TRACE`. A `%p` in it (each
 * opencode process records its own) stands for the process whose decisions file changed last.
 */
const decisionsFile = (flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string | undefined => {
  const trace = flag ?? env.OCPOOL_TRACE
  if (trace === undefined || trace === "") return undefined
  if (!trace.includes("%p")) return `${trace}.decisions.jsonl`
  const dir = dirname(trace)
  const [before, after] = basename(trace).split("%p", 2) as [string, string]
  const suffix = `${after}.decisions.jsonl`
  try {
    const newest = readdirSync(dir)
      .filter((f) => f.startsWith(before) && f.endsWith(suffix) && /^\d+$/.test(f.slice(before.length, f.length - suffix.length)))
      .map((f) => ({ f, at: statSync(join(dir, f)).mtimeMs }))
      .sort((a, b) => b.at - a.at)[0]
    return newest === undefined ? undefined : join(dir, newest.f)
  } catch {
    return undefined
  }
}

/** The last decisions in `file`, newest last; none when it cannot be read (not written yet). */
const tailDecisions = (file: string): ReadonlyArray<string> => {
  let fd: number | undefined
  try {
    fd = openSync(file, "r")
    const size = fstatSync(fd).size
    const start = Math.max(0, size - TAIL_BYTES)
    const buf = Buffer.alloc(size - start)
    const n = readSync(fd, buf, 0, buf.length, start)
    return recentDecisions(buf.subarray(0, n).toString("utf8"), DECISION_LINES, start === 0)
  } catch {
    return []
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** One read of the state as the status view, or a view of nothing but the reason it could not be read; the pool and the budgets as resolved before. */
const readView = (opened: OpenedState, pool: ResolvedPool, budgets: ReadonlyArray<BudgetInfo>) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const state = stateOf(opened, yield* readThrough(opened, ALL_RECORDS, now))
    if (state instanceof StateUnreadable) {
      // the view stays up: the next change may make it readable again
      const empty = { dir: opened.dir, exists: opened.exists, processes: [], cooldowns: new Map(), quota: [], fallbacks: [], permits: [], learned: [], now, warnings: [`state dir ${state.dir} unreadable: ${state.reason}`] }
      return { now, view: viewOfState(empty, pool, budgets) }
    }
    return { now, view: viewOfState(state, pool, budgets) }
  })

export const watchRun = (args: WatchFlags) =>
  Effect.gen(function* () {
    yield* checkPoolFile(args.pool)
    const io = yield* CurrentIo
    let opened = yield* openState(args.stateDir)
    // the terminal the view takes (a test's in memory; this process's otherwise)
    const terminal = Option.getOrElse(yield* Effect.serviceOption(LiveTerminal), () => liveTerminalProcess(io.stdout as NodeJS.WriteStream, io.stdinIsTTY))
    const screen = terminal.screen && !args.json
    const decisions = screen ? decisionsFile(args.trace, io.env) : undefined
    // resolved once for the whole view: the budgets (capacity `auto` from the cgroup and /proc), the pool (again when its files change)
    const budgets = yield* viewBudgets
    const pool = poolMemo(args.pool)
    const code = yield* Effect.scoped(
      Effect.gen(function* () {
        const events = yield* Queue.unbounded<Event>()
        const offer = (e: Event) => void Queue.unsafeOffer(events, e)
        yield* ownSignals((c) => offer({ _tag: "Stop", code: c }))
        if (screen) yield* terminal.take({ keys: (text) => offer({ _tag: "Keys", text }), resized: () => offer({ _tag: "Resize" }) })
        // off a terminal, a reader that goes away (`| head -1`) ends the view even while nothing changes
        if (!screen && io.stdout === process.stdout) yield* Effect.forkScoped(Effect.andThen(stdoutReaderGone(), () => offer({ _tag: "Stop", code: 0 })))
        yield* Effect.forkScoped(Stream.runForEach(pool.changes, () => Queue.offer(events, POOL)))
        const draw = screen ? screenDrawer(io, terminal, decisions) : ndjsonDrawer(io)
        // one session per state directory as found: a directory made after the view started is opened then
        for (;;) {
          const ended = yield* session(opened, pool, budgets, events, draw, decisions)
          if (ended !== "reopen") return ended
          opened = yield* openState(args.stateDir)
        }
      })
    )
    if (code !== 0) return yield* new ExitWith({ code })
  })

/** What a session draws with: the view read, and whether it is a tick (only the countdowns moved). */
type Drawer = (view: StatusView, now: number, batch: ReadonlyArray<Event>) => Effect.Effect<number | undefined>

/**
 * The view over one opened state: its port (built in this scope, so the producers forked below stop
 * before it closes), the change feed and the decisions file as events, a re-read on each change and
 * on each due countdown, at most one draw per MIN_FRAME_MS. Ends with an exit code, or "reopen" when
 * the state directory that did not exist now does.
 */
const session = (opened: OpenedState, pool: PoolMemo, budgets: ReadonlyArray<BudgetInfo>, events: Queue.Queue<Event>, draw: Drawer, decisions: string | undefined) =>
  Effect.scoped(
    Effect.gen(function* () {
      const context = yield* Layer.build(portOf(opened))
      const shared = Context.get(context, SharedState)
      yield* Effect.forkScoped(Stream.runForEach(shared.changes, () => Queue.offer(events, CHANGED)))
      if (decisions !== undefined) {
        const name = basename(decisions)
        yield* Effect.forkScoped(Stream.runForEach(Stream.filter(dirChanges(dirname(decisions)), (f) => f === undefined || f === name), () => Queue.offer(events, DECISIONS)))
      }
      if (!opened.exists) yield* Effect.forkScoped(Stream.runForEach(Stream.filter(dirChanges(opened.dir), () => existsSync(opened.dir)), () => Queue.offer(events, REOPEN)))
      let view: StatusView | undefined
      let stale = true
      let batch: ReadonlyArray<Event> = []
      for (;;) {
        if (stale || view === undefined) view = (yield* readView(opened, pool.current(), budgets).pipe(Effect.provide(context))).view
        stale = false
        const now = yield* Clock.currentTimeMillis
        const ended = yield* draw(view, now, batch)
        if (ended !== undefined) return ended
        // the next change, or the next second of a countdown on screen (and the header's next minute)
        const tick = Math.min(nextTickIn(view, now) ?? Infinity, 60_000 - (now % 60_000))
        const first = yield* Queue.take(events).pipe(Effect.timeout(Math.max(MIN_FRAME_MS, tick)), Effect.option)
        // a countdown is due: a cooldown or a lease may have run out with no file changing, so read again
        if (Option.isNone(first)) stale = true
        // coalesce: everything that arrives within the frame interval is one draw
        const since = (yield* Clock.currentTimeMillis) - now
        if (since < MIN_FRAME_MS && Option.isSome(first) && first.value._tag !== "Keys") yield* Effect.sleep(MIN_FRAME_MS - since)
        batch = [...Option.toArray(first), ...(yield* Queue.takeAll(events))]
        for (const e of batch) {
          if (e._tag === "Stop") return e.code
          if (e._tag === "Reopen") return "reopen" as const
          if (e._tag === "Changed") stale = true
          if (e._tag === "Pool") {
            pool.changed()
            stale = true
          }
        }
      }
    })
  )

/**
 * A frame's lines as written: from the top left, each ended by a reset, the screen below cleared. A
 * line that fills the width leaves the cursor on its last column, where an erase-to-end-of-line would
 * take that column's character with it (`coolin`, `1m27`): only a shorter line erases the rest of its row.
 */
export const frameText = (lines: ReadonlyArray<string>, cols: number): string =>
  `\x1b[H${lines.map((l) => `${l}\x1b[0m${visibleWidth(l) < cols ? "\x1b[K" : ""}`).join("\r\n")}\x1b[J`

/** The full-screen frame: keys applied, the last decisions re-read, the frame drawn. */
const screenDrawer = (io: CliIo, terminal: LiveTerminalService, decisions: string | undefined): Drawer => {
  const color = colourOn(io, io.stdout)
  let ui: ViewUi = INITIAL_UI
  let maxScroll = 0
  let recent: ReadonlyArray<string> = decisions === undefined ? [] : tailDecisions(decisions)
  return (view, now, batch) =>
    Effect.gen(function* () {
      const size = yield* terminal.size
      for (const e of batch) {
        if (e._tag === "Decisions" && decisions !== undefined) recent = tailDecisions(decisions)
        if (e._tag === "Keys")
          for (const action of keyActions(e.text)) {
            if (action === "quit") return 0
            ui = applyKey(ui, action, maxScroll, size.rows - 3)
          }
      }
      const frame = liveFrame(view, now, { ...size, color }, { scroll: ui.scroll, help: ui.help, ...(decisions === undefined ? {} : { decisions: recent }) })
      maxScroll = frame.maxScroll
      if (ui.scroll > maxScroll) ui = { ...ui, scroll: maxScroll }
      yield* writeTo(io.stdout, "stdout", frameText(frame.lines, size.cols))
      return undefined
    })
}

/**
 * Off a terminal: the status object whenever it changed, one line each. The fleet's round trip is
 * measured anew on every read: it does not count as a change.
 */
const ndjsonDrawer = (io: CliIo): Drawer => {
  let last = ""
  return (view) =>
    Effect.gen(function* () {
      const line = printableJson(JSON.stringify(view))
      const key = view.fleet?.reachable === true ? JSON.stringify({ ...view, fleet: { ...view.fleet, roundTripMs: 0 } }) : line
      if (key !== last) {
        yield* writeTo(io.stdout, "stdout", `${line}\n`)
        last = key
      }
      return undefined
    })
}
