/**
 * The fleet driver (issue 22 item 5; `node dist/dev-fleet-drive.js`, src/dev/fleetDrive.ts, formerly
 * `ocpool fleet drive`), its pure parts: its argv read and its flags checked, the seeded pause between
 * picks, what a pick saw in its transaction (the picked model's fleet-wide live load, the cooling
 * models) and the JSON lines it prints, exactly:
 *   {"ev":"start","host":H,"pid":P,"backend":B}
 *   {"ev":"pick","host":H,"key":K,"model":M,"slot":I,"pass":"first|second|overflow","load":L,"cap":C,"cooling":[…],"at":T}
 *   {"ev":"release","host":H,"key":K,"at":T}
 *   {"ev":"cool","host":H,"model":M,"until":U,"at":T}
 *   {"ev":"done","host":H,"picks":N,"failOpens":F,"fallbacks":B}
 */
import type { Claim } from "../pool/claims.js"
import { liveLoadOf } from "../pool/slotStatus.js"
import type { CooldownTable } from "../pool/cooldown.js"

/** mulberry32: a small deterministic PRNG; each call gives a float in [0, 1). */
export const mulberry32 = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The pause after a pick: an integer in [0, maxMs] drawn from `next`. */
export const pauseMs = (next: () => number, maxMs: number): number => Math.min(maxMs, Math.floor(next() * (maxMs + 1)))

export interface DriveFlags {
  readonly config: string
  readonly picks: number
  readonly hold: number
  readonly seed: number
  readonly pauseMs: number
  readonly startAt: number
  readonly cool: { readonly after: number; readonly model: string; readonly ms: number } | undefined
}

/** The raw flag values, as given (absent: undefined). */
export interface RawDriveFlags {
  readonly config: string | undefined
  readonly picks: string | undefined
  readonly hold: string | undefined
  readonly seed: string | undefined
  readonly pauseMs: string | undefined
  readonly startAt: string | undefined
  readonly coolAfter: string | undefined
  readonly coolModel: string | undefined
  readonly coolMs: string | undefined
}

/** Each flag of the driver: its name, the raw field it fills, the word its value is shown as. */
export const DRIVE_FLAGS: ReadonlyArray<{ readonly name: string; readonly key: keyof RawDriveFlags; readonly pseudo: string }> = [
  { name: "--config", key: "config", pseudo: "FILE" },
  { name: "--picks", key: "picks", pseudo: "N" },
  { name: "--hold", key: "hold", pseudo: "H" },
  { name: "--seed", key: "seed", pseudo: "S" },
  { name: "--pause-ms", key: "pauseMs", pseudo: "P" },
  { name: "--start-at", key: "startAt", pseudo: "EPOCH_MS" },
  { name: "--cool-after", key: "coolAfter", pseudo: "K" },
  { name: "--cool-model", key: "coolModel", pseudo: "MODEL" },
  { name: "--cool-ms", key: "coolMs", pseudo: "W" }
]

/** The driver's argv read: its help asked for, a usage problem (one line), or the raw flag values. */
export type DriveArgs =
  | { readonly _tag: "Help" }
  | { readonly _tag: "Usage"; readonly message: string }
  | { readonly _tag: "Raw"; readonly raw: RawDriveFlags }

const HELP_SWITCHES: ReadonlySet<string> = new Set(["--help", "-h"])

/**
 * The driver's argv (after the script) read as `ocpool fleet drive` read it: `--flag VALUE` or
 * `--flag=VALUE` (a value may start with `-`, unless it is a flag's name), each flag at most once,
 * `--help`/`-h` anywhere; the first problem is one line prefixed `fleet drive: `.
 */
export const parseDriveArgs = (args: ReadonlyArray<string>): DriveArgs => {
  const flags = new Map(DRIVE_FLAGS.map((f) => [f.name, f]))
  const raw: { -readonly [K in keyof RawDriveFlags]: string | undefined } = {
    config: undefined, picks: undefined, hold: undefined, seed: undefined, pauseMs: undefined, startAt: undefined, coolAfter: undefined, coolModel: undefined, coolMs: undefined
  }
  const usage = (message: string): DriveArgs => ({ _tag: "Usage", message: `fleet drive: ${message}` })
  let help = false
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!
    if (HELP_SWITCHES.has(word)) {
      help = true
      continue
    }
    if (!word.startsWith("-") || word === "-" || word === "--") return usage(`unexpected argument '${word}'`)
    const eq = word.indexOf("=")
    const name = eq < 0 ? word : word.slice(0, eq)
    const flag = flags.get(name)
    if (flag === undefined) return usage(`unknown flag '${name}'`)
    let value: string | undefined
    if (eq >= 0) value = word.slice(eq + 1)
    else {
      const next = args[i + 1]
      value = next === undefined || next === "--" || flags.has(next.split("=")[0]!) || HELP_SWITCHES.has(next) ? undefined : next
      if (value !== undefined) i++
    }
    if (value === undefined || value === "") return usage(`${name} needs a value (${name} ${flag.pseudo})`)
    if (raw[flag.key] !== undefined) return usage(`${name} given more than once`)
    raw[flag.key] = value
  }
  return help ? { _tag: "Help" } : { _tag: "Raw", raw }
}

export type Checked<A> = { readonly _tag: "Value"; readonly value: A } | { readonly _tag: "Problem"; readonly message: string }

const problem = (message: string): Checked<never> => ({ _tag: "Problem", message })

/** A decimal integer ≥ `min` (at most 2^53 − 1), or the problem naming `flag`. */
const integerFlag = (flag: string, raw: string | undefined, min: number, what: string): Checked<number> => {
  if (raw === undefined) return problem(`--${flag} is required`)
  if (!/^\d+$/.test(raw.trim())) return problem(`--${flag} ${JSON.stringify(raw)} invalid (${what})`)
  const n = Number(raw.trim())
  if (!Number.isSafeInteger(n) || n < min) return problem(`--${flag} ${JSON.stringify(raw)} invalid (${what})`)
  return { _tag: "Value", value: n }
}

/** Every flag of the driver checked; the first problem names its flag. */
export const checkDriveFlags = (raw: RawDriveFlags): Checked<DriveFlags> => {
  if (raw.config === undefined || raw.config === "") return problem("--config is required (the plugin's options as a JSON file)")
  const picks = integerFlag("picks", raw.picks, 1, "a positive integer")
  if (picks._tag === "Problem") return picks
  const hold = integerFlag("hold", raw.hold, 1, "a positive integer")
  if (hold._tag === "Problem") return hold
  const seed = integerFlag("seed", raw.seed, 0, "an integer 0 or more")
  if (seed._tag === "Problem") return seed
  const pause = integerFlag("pause-ms", raw.pauseMs, 0, "an integer 0 or more")
  if (pause._tag === "Problem") return pause
  const startAt = integerFlag("start-at", raw.startAt, 0, "epoch milliseconds")
  if (startAt._tag === "Problem") return startAt
  const anyCool = raw.coolAfter !== undefined || raw.coolModel !== undefined || raw.coolMs !== undefined
  let cool: DriveFlags["cool"]
  if (anyCool) {
    if (raw.coolAfter === undefined) return problem("--cool-model and --cool-ms need --cool-after")
    const after = integerFlag("cool-after", raw.coolAfter, 1, "a positive integer")
    if (after._tag === "Problem") return after
    if (raw.coolModel === undefined) return problem("--cool-after needs --cool-model and --cool-ms")
    if (!/^[^/\s]+\/\S+$/.test(raw.coolModel)) return problem(`--cool-model ${JSON.stringify(raw.coolModel)} invalid (provider/model)`)
    if (raw.coolMs === undefined) return problem("--cool-after needs --cool-model and --cool-ms")
    const ms = integerFlag("cool-ms", raw.coolMs, 1, "a positive integer")
    if (ms._tag === "Problem") return ms
    if (after.value > picks.value) return problem(`--cool-after ${after.value} invalid (at most --picks ${picks.value})`)
    cool = { after: after.value, model: raw.coolModel, ms: ms.value }
  }
  return {
    _tag: "Value",
    value: { config: raw.config, picks: picks.value, hold: hold.value, seed: seed.value, pauseMs: pause.value, startAt: startAt.value, cool }
  }
}

/** What a pick's transaction saw: the picked model, its fleet-wide live load with this claim, the cooling models. */
export interface PickSeen {
  readonly key: string
  readonly model: string
  readonly load: number
  readonly cooling: ReadonlyArray<string>
}

/** The models cooling in a snapshot at `now` (their `until` is still ahead), sorted. */
export const coolingAt = (cooldowns: CooldownTable, now: number): ReadonlyArray<string> =>
  [...cooldowns.values()].filter((c) => c.until > now).map((c) => c.model).sort()

/** `model`'s live claims: this process's (the claim just made included) and every peer's. */
export const fleetLoad = (
  own: ReadonlyArray<Pick<Claim, "model" | "heartbeatAt">>,
  peers: ReadonlyArray<{ readonly claims: ReadonlyArray<Pick<Claim, "model" | "heartbeatAt">> }>,
  model: string,
  now: number
): number => {
  return liveLoadOf([{ claims: own }, ...peers], now).get(model) ?? 0
}

/** What the engine's `routed …` log line (core/engine/decisionLog.ts) says of a pick. */
export interface RoutedLine {
  readonly agent: string
  readonly slot: number
  readonly model: string
  /** 2 × the picked slot's weight. */
  readonly cap: number
  readonly pass: "first" | "second" | "overflow"
}

const ROUTED = /^routed \S+ -> (\S+) slot=(\d+) model=(\S+) load=\d+\/(\d+) pass=(first|second|overflow)$/

export const routedLine = (message: string): RoutedLine | undefined => {
  const m = ROUTED.exec(message)
  return m === null ? undefined : { agent: m[1]!, slot: Number(m[2]), model: m[3]!, cap: Number(m[4]), pass: m[5] as RoutedLine["pass"] }
}

export type DriveEvent =
  | { readonly ev: "start"; readonly host: string; readonly pid: number; readonly backend: "postgres" | "sqlite" }
  | {
      readonly ev: "pick"
      readonly host: string
      readonly key: string
      readonly model: string
      readonly slot: number
      readonly pass: RoutedLine["pass"]
      readonly load: number
      readonly cap: number
      readonly cooling: ReadonlyArray<string>
      readonly at: number
    }
  | { readonly ev: "release"; readonly host: string; readonly key: string; readonly at: number }
  | { readonly ev: "cool"; readonly host: string; readonly model: string; readonly until: number; readonly at: number }
  | { readonly ev: "done"; readonly host: string; readonly picks: number; readonly failOpens: number; readonly fallbacks: number }

/** One stdout line, its keys in the documented order. */
export const eventLine = (e: DriveEvent): string => {
  switch (e.ev) {
    case "start":
      return JSON.stringify({ ev: e.ev, host: e.host, pid: e.pid, backend: e.backend })
    case "pick":
      return JSON.stringify({ ev: e.ev, host: e.host, key: e.key, model: e.model, slot: e.slot, pass: e.pass, load: e.load, cap: e.cap, cooling: e.cooling, at: e.at })
    case "release":
      return JSON.stringify({ ev: e.ev, host: e.host, key: e.key, at: e.at })
    case "cool":
      return JSON.stringify({ ev: e.ev, host: e.host, model: e.model, until: e.until, at: e.at })
    case "done":
      return JSON.stringify({ ev: e.ev, host: e.host, picks: e.picks, failOpens: e.failOpens, fallbacks: e.fallbacks })
  }
}
