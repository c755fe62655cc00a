/** The benchmarks' spawn trace: a deterministic mix of lines as a busy plugin records them (at most 40 claims open). */
import { rng } from "./common.js"

export const generate = (n: number): Array<string> => {
  const rand = rng(42)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(rand() * xs.length)]!
  const models = ["zen/alpha", "zen/beta", "go/gamma", "or/nvidia/x:free"]
  const texts = ["Rate limit exceeded", "limit reached", "context limit reached", "503 Service Unavailable", "Resets in 35min", '{"name":"APIError","data":{"message":"Too Many Requests","statusCode":429}}']
  let at = 1_796_115_600_000
  const out: Array<string> = [JSON.stringify({ at, type: "pool", slots: models.map((model, i) => ({ model, weight: [3, 2, 1, 1][i] })) })]
  const open: Array<{ claim: string; session: string | null }> = []
  let seq = 0
  while (out.length < n) {
    at += Math.floor(rand() * 2_000)
    const r = rand()
    let line: Record<string, unknown>
    if ((r < 0.2 && open.length < 40) || open.length === 0) {
      const claim = `ses_parent${seq % 50}:call_${seq++}`
      open.push({ claim, session: null })
      line = { at, type: "spawn", claim, base: pick(["explore", "implement", "context"]), session: `ses_parent${seq % 50}` }
    } else if (r < 0.35) {
      const c = pick(open)
      c.session = `ses_child${seq++}`
      line = { at, type: "bind", claim: c.claim, session: c.session }
    } else if (r < 0.7) {
      const c = pick(open)
      line = { at, type: "activity", session: c.session ?? `ses_other${seq % 1000}` }
    } else if (r < 0.85) {
      const i = Math.floor(rand() * open.length)
      const [c] = open.splice(i, 1)
      line = { at, type: "release", claim: c!.claim, ok: rand() < 0.9 }
    } else if (r < 0.9) {
      const c = pick(open)
      line = { at, type: "limit", text: pick(texts), session: c.session ?? "ses_none", ...(rand() < 0.5 ? { status: 429, headers: { "retry-after": "30" } } : {}) }
    } else if (r < 0.93) {
      const c = pick(open)
      line = { at, type: "retry", session: c.session ?? "ses_none", message: pick(texts), next: at + pick([1_000, 3_000, 90_000]) }
    } else if (r < 0.98) {
      line = { at, type: "sweep" }
    } else {
      line = { at, type: "status" }
    }
    out.push(JSON.stringify(line))
  }
  return out
}
