/**
 * Fleet stress (issue 22, "Done when"; `npx vitest run --config vitest.stress.config.ts test/stress/fleet.test.ts`,
 * after `npm run build`): 3 simulated hosts (OCPOOL_HOST_ID host-a/b/c, each with its own state dir)
 * × 8 fleet driver (`node dist/dev-fleet-drive.js`) processes × FLEET_PICKS (300) picks against one throwaway PostgreSQL; host-c
 * (all 8 processes) SIGKILLed midway, the server restarted once midway. Checked:
 * 1. no over-cap pick: (a) every first/second pass pick's in-transaction fleet-wide `load` ≤ cap;
 *    (b) from the recorded claim intervals (fleet/analysis.ts: they lie inside the true claim lives,
 *    so an excess found there is real), the non-overflow claims of a model never exceed its cap;
 * 2. host-c's claims are gone from the server within one lease (+ one heartbeat) after the kill;
 * 3. host-a#0's cooldown of p/a is in every other host's pick from 1 s after its commit, none picks p/a;
 * 4. after the restart, every claim a live process surely held at a `SELECT` of the claims table is there.
 * Decisions made on a host's files while the server was away (from the restart until the process's
 * "rejoined" log line) are not fleet-wide by design: they are left out of 1 and 3 and reported.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startPgCluster } from "../real/pgCluster.js"
import { sleep } from "../real/procs.js"
import {
  claimIntervals,
  cooldownCovered,
  cooldownViolations,
  loadViolations,
  lostClaims,
  overCaps,
  parseLine,
  picksOf,
  pidOf,
  snapshotOf,
  type ClaimSnapshot,
  type CoolLine,
  type DoneLine,
  type Interval,
  type Line,
  type PickLine,
  type Proc
} from "./fleet/analysis.js"
import { bin, root, startDrive, wallNow, type Drive } from "./fleet/run.js"

/**
 * Picks per process: the 300. Every pick takes the fleet-wide pool lock: on a quiet 2-core
 * machine the fleet makes about 70 picks a second (24 × 300 in about 80 s); under heavy load it fell to
 * about 10 a second, so FLEET_PICKS=60 is the quick setting.
 */
const PICKS = Number(process.env.FLEET_PICKS ?? 300)
const ENGINES = Number(process.env.FLEET_ENGINES ?? 8)
const HOSTS = ["host-a", "host-b", "host-c"] as const
const VICTIM = "host-c"
const HOLD = 2
const PAUSE_MS = 5
const LEASE_MS = 5_000
const HEARTBEAT_MS = Math.max(1_000, Math.floor(LEASE_MS / 3))
const COOL = { after: Math.max(5, Math.floor(PICKS / 6)), model: "p/a", ms: 30_000 }
const GRACE_MS = 1_000
const SLOTS = [
  { model: "p/a", weight: 2 },
  { model: "p/b", weight: 2 },
  { model: "q/c", weight: 1 },
  { model: "q/d", weight: 1 }
]
const WEIGHTS = new Map(SLOTS.map((s) => [s.model, s.weight]))
const CAPS = new Map(SLOTS.map((s) => [s.model, 2 * s.weight]))

// ---- synthetic lines for the checker's own checks ----
const pick = (host: string, key: string, model: string, at: number, o: Partial<PickLine> = {}): PickLine => ({
  ev: "pick", host, key, model, slot: SLOTS.findIndex((s) => s.model === model), pass: "first", load: 1, cap: CAPS.get(model)!, cooling: [], at, ...o
})
const rel = (host: string, key: string, at: number): Line => ({ ev: "release", host, key, at })
const proc = (name: string, host: string, pid: number, lines: ReadonlyArray<Line>, killed = false): Proc => ({
  name, host, killed, lines: [{ ev: "start", host, pid, backend: "postgres" }, ...lines]
})

describe("US-52 fleet stress", () => {
  it("US-52 the fleet stress checker finds over-caps, unhonoured cooldowns and lost claims in synthetic lines", () => {
    // the interface is parsed strictly
    expect(parseLine('{"ev":"release","host":"h","key":"k","at":1.5}')).toEqual({ ev: "release", host: "h", key: "k", at: 1.5 })
    expect(() => parseLine('{"ev":"pick","host":"h"}')).toThrow(/interface/)
    expect(() => parseLine("warn: x")).toThrow(/not JSON/)

    // q/c has cap 2: three claims overlapping on two hosts is an over-cap; touching intervals are not
    const a = proc("a#0", "host-a", 10, [pick("host-a", "k1", "q/c", 100), pick("host-a", "k2", "q/c", 110), rel("host-a", "k1", 200), rel("host-a", "k2", 300)])
    const b = proc("b#0", "host-b", 20, [pick("host-b", "k3", "q/c", 200), rel("host-b", "k3", 250), pick("host-b", "k4", "q/c", 260), rel("host-b", "k4", 400)])
    const ok = claimIntervals({ procs: [a, b], leaseEnd: new Map() })
    expect(ok.unreleased).toEqual([])
    expect(ok.inconsistent).toEqual([])
    expect(overCaps(ok.intervals, CAPS)).toEqual([])
    expect(overCaps(ok.intervals, new Map([["q/c", 1]])).map((o) => o.at)).toEqual([110, 200, 260]) // a wrong cap is caught, once per excursion
    const c = proc("c#0", "host-c", 30, [pick("host-c", "k5", "q/c", 150)], true)
    // killed: held until its lease ends (k5 overlaps k1, k2 at 150)
    const killed = claimIntervals({ procs: [a, b, c], leaseEnd: new Map([[30, 180]]) })
    expect(overCaps(killed.intervals, CAPS)).toMatchObject([{ model: "q/c", at: 150, count: 3, cap: 2 }])
    // a claim the server held for the killed process but whose line never came out counts from the kill
    const hidden = claimIntervals({ procs: [a, proc("c#1", "host-c", 31, [], true)], leaseEnd: new Map([[31, 500]]), killedHeld: new Map([[31, { at: 120, keys: [{ key: "kx", model: "q/c" }] }]]) })
    expect(overCaps(hidden.intervals, CAPS)).toMatchObject([{ model: "q/c", at: 120, count: 3 }])
    // a live process that never released is reported; overflow claims are not capped
    expect(claimIntervals({ procs: [proc("a#1", "host-a", 11, [pick("host-a", "k9", "p/a", 1)])], leaseEnd: new Map() }).unreleased).toEqual([{ proc: "a#1", key: "k9" }])
    // decisions in a suspect window are marked
    expect(claimIntervals({ procs: [a], leaseEnd: new Map(), suspectWindows: new Map([["a#0", [[105, 120] as const]]]) }).intervals.map((i) => i.suspect)).toEqual([false, true])

    // the in-transaction load
    expect(loadViolations([pick("h", "k", "q/c", 1, { load: 2 }), pick("h", "k", "q/c", 1, { load: 5, pass: "overflow" })], WEIGHTS)).toEqual([])
    expect(loadViolations([pick("h", "k", "q/c", 1, { load: 3, pass: "second" })], WEIGHTS)).toHaveLength(1)
    expect(loadViolations([pick("h", "k", "q/c", 1, { cap: 4 })], WEIGHTS)).toHaveLength(1)

    // the cooldown: honoured from 1 s after its commit until it ends
    const cool: CoolLine = { ev: "cool", host: "host-a", model: "p/a", until: 10_000, at: 1_000 }
    const before = pick("host-b", "x", "p/a", 1_900)
    const good = pick("host-b", "y", "p/b", 2_100, { cooling: ["p/a"] })
    const blind = pick("host-b", "z", "p/b", 2_200)
    const picked = pick("host-b", "w", "p/a", 3_000, { cooling: ["p/a"] })
    const after = pick("host-b", "v", "p/a", 10_000)
    expect(cooldownViolations([before, good, blind, picked, after], cool, GRACE_MS)).toEqual([blind, picked])
    expect(cooldownCovered([before, good, blind, picked, after], cool, GRACE_MS)).toBe(3)

    // lost claims: surely held = picked before the query began, not released before it ended
    const p = proc("b#1", "host-b", 21, [pick("host-b", "s1", "p/b", 100), pick("host-b", "s2", "p/b", 150), rel("host-b", "s1", 180), pick("host-b", "s3", "p/b", 260)])
    const snap = (keys: ReadonlyArray<string>): ClaimSnapshot => snapshotOf(200, 250, [{ host: "host-b", pid: 21, body: { claims: Object.fromEntries(keys.map((k) => [k, {}])) } }])
    expect(lostClaims([p], snap(["s2"]))).toEqual({ checked: 1, lost: [] })
    expect(lostClaims([p], snap([]))).toEqual({ checked: 1, lost: ["b#1:s2"] })
    expect(lostClaims([p], snap([]), new Map([["b#1", [[240, 300] as const]]]))).toEqual({ checked: 0, lost: [] })
  })

  it("US-52 3 hosts × 8 engines × FLEET_PICKS picks on one PostgreSQL, one host SIGKILLed and the server restarted midway: no over-cap, dead claims reaped within a lease, cooldowns shared, no claim lost", async () => {
    // the test runs dist/: it must have been built, the fleet driver with it
    try {
      execFileSync(process.execPath, [bin, "--help"], { cwd: root, stdio: "pipe", timeout: 30_000 })
    } catch (e) {
      throw new Error(`\`node dist/dev-fleet-drive.js --help\` failed: run \`npm run build\` first (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`)
    }
    const cluster = await startPgCluster()
    const dir = mkdtempSync(join(tmpdir(), "ocpool-fleet-stress-"))
    const drives: Array<Drive> = []
    let progressTimer: ReturnType<typeof setInterval> | undefined
    const snapshots: Array<ClaimSnapshot> = []
    const events: Record<string, number> = {}
    try {
      const configs = new Map(
        HOSTS.map((host) => {
          const stateDir = join(dir, `state-${host}`)
          mkdirSync(stateDir, { recursive: true })
          const file = join(dir, `${host}.json`)
          writeFileSync(file, JSON.stringify({ state: { backend: "postgres", url: cluster.url, leaseMs: LEASE_MS }, stateDir, lockWaitMs: 60_000, models: { slots: SLOTS } }))
          return [host, file] as const
        })
      )
      let picks = 0
      let livePicks = 0
      let cool: CoolLine | undefined
      const onLine = (d: Drive, l: Line) => {
        if (l.ev === "pick") {
          picks++
          if (d.host !== VICTIM) livePicks++
        }
        if (l.ev === "cool") cool = l
      }
      const spawnedAt = wallNow()
      const startAt = spawnedAt + 4_000 + 400 * HOSTS.length * ENGINES
      HOSTS.forEach((host, h) => {
        for (let e = 0; e < ENGINES; e++) {
          const name = `${host}#${e}`
          drives.push(
            startDrive(
              { name, host, config: configs.get(host)!, picks: PICKS, hold: HOLD, seed: 1_000 * (h + 1) + e, pauseMs: PAUSE_MS, startAt, ...(host === "host-a" && e === 0 ? { cool: COOL } : {}) },
              onLine
            )
          )
        }
      })
      let running = true
      const note = (what: string) => console.error(`fleet stress +${((wallNow() - startAt) / 1000).toFixed(1)}s: ${what} (picks ${picks})`)
      progressTimer = setInterval(() => note(`running; started ${drives.filter((d) => d.lines.length > 0).length}/${drives.length}, exited ${drives.filter((d) => d.child.exitCode !== null || d.child.signalCode !== null).length}`), 5_000)
      const allExited = Promise.all(drives.map((d) => d.exited)).then((x) => {
        running = false
        return x
      })

      // a snapshot of the server's claims every ~300 ms (failures while the server restarts are expected)
      const query = `select coalesce(json_agg(json_build_object('host', host, 'pid', pid, 'body', body::json)), '[]')::text from ocpool.claims`
      const snapshotLoop = (async () => {
        while (running) {
          const qs = wallNow()
          try {
            const out = await cluster.psql(query)
            snapshots.push(snapshotOf(qs, wallNow(), JSON.parse(out.trim()) as Array<{ host: string; pid: number; body: unknown }>))
          } catch {
            // the server is away or the schema not there yet
          }
          await sleep(300)
        }
      })()

      const waitFor = async (what: string, ok: () => boolean) => {
        while (!ok()) {
          if (!running) throw new Error(`the drives ended before ${what} (picks ${picks})`)
          await sleep(50)
        }
      }

      // ---- the kill: host-c's 8 processes, SIGKILL, once 30% of all picks are made ----
      await waitFor("the kill", () => picks >= 0.3 * HOSTS.length * ENGINES * PICKS)
      const victims = drives.filter((d) => d.host === VICTIM)
      const killAt = wallNow()
      note("SIGKILL host-c")
      for (const d of victims) {
        d.killed = true
        d.child.kill("SIGKILL")
      }
      await Promise.all(victims.map((d) => d.exited))
      const killedDone = wallNow()
      // what the server holds for host-c right after: each holder's lease end, the claims' keys
      const holders = JSON.parse(
        (await cluster.psql(`select coalesce(json_agg(json_build_object('pid', pid, 'lease_until', lease_until)), '[]')::text from ocpool.holders where host = '${VICTIM}'`)).trim()
      ) as Array<{ pid: number; lease_until: number }>
      const victimRows = JSON.parse(
        (await cluster.psql(`select coalesce(json_agg(json_build_object('pid', pid, 'body', body::json)), '[]')::text from ocpool.claims where host = '${VICTIM}'`)).trim()
      ) as Array<{ pid: number; body: { claims?: Record<string, { model: string }> } }>
      const leaseEnd = new Map(holders.map((r) => [r.pid, Number(r.lease_until)]))
      const killedHeld = new Map(
        victimRows.map((r) => [r.pid, { at: killAt, keys: Object.entries(r.body.claims ?? {}).map(([key, c]) => ({ key, model: c.model })) }])
      )
      const heldAtKill = victimRows.reduce((n, r) => n + Object.keys(r.body.claims ?? {}).length, 0)
      // until the server has none of host-c's claims left
      let removedAt: number | undefined
      while (removedAt === undefined && wallNow() - killAt < 4 * LEASE_MS) {
        const n = Number((await cluster.psql(`select count(*) from ocpool.claims where host = '${VICTIM}'`)).trim())
        if (n === 0) removedAt = wallNow()
        else await sleep(100)
      }

      // ---- the restart, once host-a and host-b are 60% through ----
      await waitFor("the restart", () => livePicks >= 0.6 * 2 * ENGINES * PICKS)
      const restartStart = wallNow()
      note(`host-c's claims removed after ${removedAt === undefined ? "(never)" : Math.round(removedAt - killAt)} ms; restarting the server`)
      await cluster.restart()
      const restartEnd = wallNow()
      Object.assign(events, { startAt, killAt, removedAt: removedAt ?? -1, restartStart, restartEnd })
      note("server restarted")

      const exits = await allExited
      await snapshotLoop
      clearInterval(progressTimer)
      const endedAt = wallNow()

      // ---- what the processes said ----
      for (const d of drives) expect(d.bad, `${d.name} printed lines outside the interface`).toEqual([])
      const live = drives.filter((d) => !d.killed)
      exits.forEach((x, i) => {
        const d = drives[i]!
        if (d.killed) expect(x.signal).toBe("SIGKILL")
        else expect(x, `${d.name} stderr: ${d.stderr.slice(-5).map((s) => s.text).join(" | ")}`).toEqual({ code: 0, signal: null })
      })
      const done = live.map((d) => d.lines.find((l): l is DoneLine => l.ev === "done"))
      expect(done.every((x) => x !== undefined)).toBe(true)
      const procs: Array<Proc> = drives.map((d) => ({ name: d.name, host: d.host, lines: d.lines, killed: d.killed }))
      const allPicks = procs.flatMap(picksOf)
      // a pick the drive could not route is reported on its stderr and left out of `done.picks`
      live.forEach((d, i) => expect(picksOf({ name: d.name, host: d.host, lines: d.lines, killed: false }).length, `${d.name} picks`).toBe(done[i]!.picks))
      const notRouted = live.flatMap((d) => d.stderr.filter((s) => /was not routed/.test(s.text)).map((s) => `${d.name}: ${s.text}`))
      // a pick in flight when the server stopped falls back like any other: every pick is routed
      expect(notRouted, notRouted.join("\n")).toEqual([])

      // decisions that may have been made on files: from the restart until the process logged that it rejoined
      const away = new Map<string, Array<readonly [number, number]>>()
      for (const d of drives) {
        const fell = d.stderr.some((s) => /fleet: PostgreSQL .* did not answer/.test(s.text))
        if (!fell) continue
        const back = d.stderr.find((s) => s.at >= restartStart && /answers again; this host rejoined/.test(s.text))
        away.set(d.name, [[restartStart, back?.at ?? Number.POSITIVE_INFINITY]])
      }
      const suspectPick = (p: PickLine, name: string) => (away.get(name) ?? []).some(([a, b]) => p.at >= a && p.at <= b)
      const fleetPicks = procs.flatMap((p) => picksOf(p).filter((k) => !suspectPick(k, p.name)))
      const suspectPicks = allPicks.length - fleetPicks.length

      // 1a. in the transaction
      expect(loadViolations(fleetPicks, WEIGHTS)).toEqual([])
      const nonOverflow = fleetPicks.filter((p) => p.pass !== "overflow")
      expect(nonOverflow.some((p) => p.load === p.cap), "the caps were reached (else 1a proves nothing)").toBe(true)
      // 1b. from the intervals
      const built = claimIntervals({ procs, leaseEnd, killedHeld, suspectWindows: away })
      expect(built.inconsistent).toEqual([])
      expect(built.unreleased).toEqual([])
      const capped = (i: Interval) => i.pass !== "overflow" && !i.suspect
      const fleetIntervals = built.intervals.filter(capped)
      expect(overCaps(fleetIntervals, CAPS)).toEqual([])
      // the same check with every cap one lower must find excesses: it can fail
      const lowered = new Map([...CAPS].map(([m, c]) => [m, c - 1]))
      const lowerHits = overCaps(fleetIntervals, lowered)
      expect(lowerHits.length).toBeGreaterThan(0)
      const withSuspects = overCaps(built.intervals.filter((i) => i.pass !== "overflow"), CAPS)

      // 2. host-c's claims removed within one lease (+ a heartbeat) after the kill
      expect(heldAtKill, "host-c held claims when it was killed").toBeGreaterThan(0)
      expect(removedAt, "host-c's claims were never removed").toBeDefined()
      const removalMs = removedAt! - killAt
      expect(removalMs).toBeLessThanOrEqual(LEASE_MS + HEARTBEAT_MS + 500)
      const leaseLeft = [...leaseEnd.values()].map((t) => t - killAt)

      // 3. the cooldown
      expect(cool, "host-a#0 printed its cool line").toBeDefined()
      expect(cool!.until).toBeGreaterThan(cool!.at + COOL.ms - 2_000)
      const others = procs.filter((p) => p.host !== cool!.host).flatMap((p) => picksOf(p).filter((k) => !suspectPick(k, p.name)))
      expect(cooldownViolations(others, cool!, GRACE_MS)).toEqual([])
      const coolCovered = cooldownCovered(others, cool!, GRACE_MS)
      expect(coolCovered, "picks of other hosts inside the cooldown").toBeGreaterThan(10)
      const sameHost = procs.filter((p) => p.host === cool!.host).flatMap((p) => picksOf(p).filter((k) => !suspectPick(k, p.name)))
      const sameHostMisses = cooldownViolations(sameHost, cool!, GRACE_MS).length
      const suspectCoolMisses = cooldownViolations(
        procs.flatMap((p) => picksOf(p).filter((k) => suspectPick(k, p.name))),
        cool!,
        GRACE_MS
      ).length

      // 4. no claim of a live process lost: snapshots from a heartbeat after the restart on
      const after = snapshots.filter((s) => s.qs >= restartEnd + HEARTBEAT_MS)
      let checked = 0
      const lost: Array<string> = []
      for (const s of after) {
        const r = lostClaims(procs, s, away)
        checked += r.checked
        lost.push(...r.lost.map((k) => `${k} missing from the SELECT of ${s.qs.toFixed(1)}..${s.qe.toFixed(1)}`))
      }
      const beforeRestart = snapshots.filter((s) => s.qe < restartStart).map((s) => lostClaims(procs, s))
      expect(beforeRestart.flatMap((r) => r.lost)).toEqual([])
      expect(lost).toEqual([])
      expect(checked, "claims compared after the restart").toBeGreaterThan(20)
      // the claims decided on files during the outage and still held after it: they reached the server
      const carried = new Set<string>()
      for (const s of after)
        for (const p of procs.filter((x) => !x.killed && away.has(x.name)))
          for (const k of picksOf(p)) if (suspectPick(k, p.name) && k.at < s.qs && s.keys.get(`${p.host}/${pidOf(p)}`)?.has(k.key) === true) carried.add(k.key)
      const printed = new Set(allPicks.map((k) => k.key))
      const unprinted = [...killedHeld.values()].flatMap((k) => k.keys).filter((k) => !printed.has(k.key)).length

      const summary = {
        picks: allPicks.length,
        byPass: Object.fromEntries(["first", "second", "overflow"].map((x) => [x, allPicks.filter((p) => p.pass === x).length])),
        durationMs: Math.round(endedAt - startAt),
        startupMs: Math.round(startAt - spawnedAt),
        picksPerSecond: Math.round(allPicks.length / ((endedAt - startAt) / 1000)),
        fallbacks: done.reduce((n, x) => n + (x?.fallbacks ?? 0), 0),
        failOpens: done.reduce((n, x) => n + (x?.failOpens ?? 0), 0),
        processesThatFellBack: away.size,
        suspectPicks,
        overCapsIncludingFileDecisions: withSuspects.length,
        lowerCapHits: lowerHits.length,
        killAtMs: Math.round(killAt - startAt),
        killTookMs: Math.round(killedDone - killAt),
        heldAtKill,
        killedUnprintedClaims: unprinted,
        leaseLeftAtKillMs: [Math.round(Math.min(...leaseLeft)), Math.round(Math.max(...leaseLeft))],
        removalMs: Math.round(removalMs),
        restartAtMs: Math.round(restartStart - startAt),
        restartTookMs: Math.round(restartEnd - restartStart),
        awayMs: [...away.values()].map((w) => Math.round(w[0]![1] - w[0]![0])),
        coolAtMs: Math.round(cool!.at - startAt),
        coolCovered,
        sameHostMisses,
        suspectCoolMisses,
        notRouted: notRouted.length,
        snapshots: snapshots.length,
        snapshotsAfterRestart: after.length,
        claimsComparedAfterRestart: checked,
        carriedAcrossOutage: carried.size
      }
      console.log(`fleet stress: ${JSON.stringify(summary)}`)
    } finally {
      clearInterval(progressTimer)
      // every process's output, for a failure's post-mortem
      const logs = join(tmpdir(), "ocpool-fleet-stress-last")
      rmSync(logs, { recursive: true, force: true })
      mkdirSync(logs, { recursive: true })
      writeFileSync(join(logs, "snapshots.jsonl"), snapshots.map((x) => JSON.stringify({ qs: x.qs, qe: x.qe, keys: Object.fromEntries([...x.keys].map(([k, v]) => [k, [...v]])) })).join("\n") + "\n")
      writeFileSync(join(logs, "events.json"), JSON.stringify(events))
      for (const d of drives) {
        writeFileSync(join(logs, `${d.name}.out`), d.lines.map((l) => JSON.stringify(l)).join("\n") + "\n")
        writeFileSync(join(logs, `${d.name}.err`), d.stderr.map((l) => `${l.at.toFixed(1)} ${l.text}`).join("\n") + "\n")
      }
      for (const d of drives) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGKILL")
      await cluster.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000 + HOSTS.length * ENGINES * (2_000 + PICKS * 250))
})
