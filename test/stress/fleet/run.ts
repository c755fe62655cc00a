/**
 * Runs fleet driver processes (`node dist/dev-fleet-drive.js`, built by `npm run build`) and keeps what they print:
 * stdout parsed line by line against the fixed interface (fleet/analysis.ts), stderr lines with the
 * wall-clock time they arrived (the plugin's fleet warnings: "did not answer", "rejoined").
 */
import { spawn, type ChildProcess } from "node:child_process"
import { join } from "node:path"
import { trackPid, untrackPid } from "../../real/procs.js"
import { parseLine, type Line } from "./analysis.js"

export const wallNow = (): number => performance.timeOrigin + performance.now()

export const root = new URL("../../../", import.meta.url).pathname
export const bin = join(root, "dist/dev-fleet-drive.js")

export interface DriveArgs {
  readonly name: string
  readonly host: string
  readonly config: string
  readonly picks: number
  readonly hold: number
  readonly seed: number
  readonly pauseMs: number
  readonly startAt: number
  readonly cool?: { readonly after: number; readonly model: string; readonly ms: number }
}

export interface Drive {
  readonly name: string
  readonly host: string
  readonly child: ChildProcess
  readonly lines: Array<Line>
  readonly stderr: Array<{ readonly at: number; readonly text: string }>
  /** Lines that did not match the interface. */
  readonly bad: Array<string>
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  killed: boolean
}

export const startDrive = (a: DriveArgs, onLine: (d: Drive, l: Line) => void): Drive => {
  const args = [
    bin,
    "--config", a.config,
    "--picks", String(a.picks),
    "--hold", String(a.hold),
    "--seed", String(a.seed),
    "--pause-ms", String(a.pauseMs),
    "--start-at", String(Math.round(a.startAt)),
    ...(a.cool === undefined ? [] : ["--cool-after", String(a.cool.after), "--cool-model", a.cool.model, "--cool-ms", String(a.cool.ms)])
  ]
  const env: NodeJS.ProcessEnv = { ...process.env, OCPOOL_HOST_ID: a.host }
  delete env["OCPOOL_STATE_URL"] // the config file's url, not the caller's
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
  trackPid(child.pid)
  const drive: Drive = {
    name: a.name,
    host: a.host,
    child,
    lines: [],
    stderr: [],
    bad: [],
    killed: false,
    exited: new Promise((resolve) =>
      child.on("exit", (code, signal) => {
        untrackPid(child.pid)
        resolve({ code, signal })
      })
    )
  }
  const splitter = (each: (line: string) => void) => {
    let rest = ""
    return (d: Buffer) => {
      rest += d.toString("utf8")
      const parts = rest.split("\n")
      rest = parts.pop() ?? ""
      for (const p of parts) if (p.trim() !== "") each(p)
    }
  }
  child.stdout!.on(
    "data",
    splitter((text) => {
      try {
        const l = parseLine(text)
        drive.lines.push(l)
        onLine(drive, l)
      } catch (e) {
        drive.bad.push(e instanceof Error ? e.message : String(e))
      }
    })
  )
  child.stderr!.on(
    "data",
    splitter((text) => {
      drive.stderr.push({ at: wallNow(), text })
    })
  )
  return drive
}
