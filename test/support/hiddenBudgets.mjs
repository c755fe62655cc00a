// Hidden budgets (issue 35, item 6): a provider that states no budget until it is spent, the way
// OpenRouter's `:free` models and several trial keys behave. Pure arithmetic over explicit times, no
// clock, no I/O: the e2e fake (`test/e2e/fake-llm.mjs`, plain Node) and the TypeScript simulations
// (Effect's TestClock gives `now`) share this one module. Types: `hiddenBudgets.d.mts` beside it.
//
// Rules:
// - a group of models shares one budget per API key: `perMinute` requests per fixed calendar minute
//   (the minute of `now`, from :00.000 to :59.999) and `perDay` requests per UTC day (a day's window
//   ends at 00:00 UTC); a limit left out is unlimited;
// - a request is granted when both windows have room, and then counts in both; a refused request
//   counts in neither (the provider refuses it before it reaches a model);
// - when both windows are spent, the day is the one the 429 names (it ends later);
// - a model in no group is never refused (and never counted);
// - a success states nothing (no rate-limit headers); a 429 states its reset as the group says:
//   `retry-after` (the header, whole seconds rounded up), `body` (OpenRouter's shape: the reset as
//   epoch ms in `error.metadata.headers["X-RateLimit-Reset"]`) or `none` (nothing: only the message).

export const MINUTE_MS = 60_000
export const DAY_MS = 86_400_000

const windowStart = (now, size) => Math.floor(now / size) * size

const isLimit = (n) => n === undefined || (Number.isInteger(n) && n >= 0)

/**
 * The groups checked: every group has a non-empty name, at least one model, limits that are absent or
 * whole numbers ≥ 0, a known `stated`; no model is in two groups. Throws a `TypeError` naming the problem.
 * @param {ReadonlyArray<import("./hiddenBudgets.d.mts").BudgetGroup>} groups
 */
export function checkGroups(groups) {
  if (!Array.isArray(groups)) throw new TypeError("hidden budgets: groups must be an array")
  const owner = new Map()
  for (const g of groups) {
    if (g === null || typeof g !== "object") throw new TypeError("hidden budgets: a group must be an object")
    if (typeof g.name !== "string" || g.name === "") throw new TypeError("hidden budgets: a group needs a name")
    if (!Array.isArray(g.models) || g.models.length === 0 || g.models.some((m) => typeof m !== "string" || m === ""))
      throw new TypeError(`hidden budgets: group ${g.name} needs a list of model ids`)
    if (!isLimit(g.perMinute) || !isLimit(g.perDay)) throw new TypeError(`hidden budgets: group ${g.name}: perMinute and perDay are whole numbers ≥ 0`)
    if (g.stated !== undefined && g.stated !== "retry-after" && g.stated !== "body" && g.stated !== "none")
      throw new TypeError(`hidden budgets: group ${g.name}: stated is "retry-after", "body" or "none"`)
    for (const m of g.models) {
      if (owner.has(m)) throw new TypeError(`hidden budgets: model ${m} is in groups ${owner.get(m)} and ${g.name}`)
      owner.set(m, g.name)
    }
  }
}

/**
 * The 429 a spent window gives.
 * @param {import("./hiddenBudgets.d.mts").BudgetGroup} group
 * @param {"minute" | "day"} window
 * @param {number} resetAt epoch ms
 * @param {number} now epoch ms
 * @returns {import("./hiddenBudgets.d.mts").Refusal}
 */
function refusal(group, window, resetAt, now) {
  const stated = group.stated ?? "retry-after"
  const message = `Rate limit exceeded: ${group.name}-per-${window === "minute" ? "min" : "day"}.`
  const headers = { "content-type": "application/json" }
  if (stated === "retry-after") headers["retry-after"] = String(Math.ceil((resetAt - now) / 1000))
  const error = stated === "body" ? { message, code: 429, metadata: { headers: { "X-RateLimit-Reset": String(resetAt) } } } : { message, code: 429 }
  return { ok: false, status: 429, headers, body: { error }, group: group.name, window, resetAt }
}

/**
 * A provider's hidden budgets.
 * @param {{ readonly groups: ReadonlyArray<import("./hiddenBudgets.d.mts").BudgetGroup> }} config
 * @returns {import("./hiddenBudgets.d.mts").HiddenBudgets}
 */
export function makeHiddenBudgets(config) {
  const groups = config?.groups ?? []
  checkGroups(groups)
  const groupOf = new Map()
  for (const g of groups) for (const m of g.models) groupOf.set(m, g)
  /** key + "\0" + group name → counters */
  const tallies = new Map()

  const tallyOf = (key, group) => {
    const id = `${key}\u0000${group.name}`
    let t = tallies.get(id)
    if (t === undefined) {
      t = { key, group: group.name, minuteStart: Number.NaN, minuteUsed: 0, dayStart: Number.NaN, dayUsed: 0, granted: 0, refused: 0, refusedMinute: 0, refusedDay: 0 }
      tallies.set(id, t)
    }
    return t
  }

  /** @param {{ readonly key: string, readonly model: string, readonly now: number }} request */
  const answer = ({ key, model, now }) => {
    if (!Number.isFinite(now)) throw new TypeError("hidden budgets: now must be a finite number of epoch ms")
    const group = groupOf.get(model)
    if (group === undefined) return { ok: true }
    const t = tallyOf(String(key ?? ""), group)
    const minute = windowStart(now, MINUTE_MS)
    const day = windowStart(now, DAY_MS)
    if (t.minuteStart !== minute) (t.minuteStart = minute), (t.minuteUsed = 0)
    if (t.dayStart !== day) (t.dayStart = day), (t.dayUsed = 0)
    const dayFull = group.perDay !== undefined && t.dayUsed >= group.perDay
    const minuteFull = group.perMinute !== undefined && t.minuteUsed >= group.perMinute
    if (dayFull || minuteFull) {
      t.refused++
      if (dayFull) t.refusedDay++
      else t.refusedMinute++
      return dayFull ? refusal(group, "day", day + DAY_MS, now) : refusal(group, "minute", minute + MINUTE_MS, now)
    }
    t.minuteUsed++
    t.dayUsed++
    t.granted++
    return { ok: true, group: group.name }
  }

  const counts = () =>
    [...tallies.values()].map((t) => ({
      key: t.key,
      group: t.group,
      minute: { start: t.minuteStart, used: t.minuteUsed },
      day: { start: t.dayStart, used: t.dayUsed },
      granted: t.granted,
      refused: t.refused,
      refusedMinute: t.refusedMinute,
      refusedDay: t.refusedDay
    }))

  return { groups: groups.map((g) => ({ ...g, models: [...g.models] })), answer, counts }
}
