/**
 * The Prometheus text exposition format 0.0.4 (issue 36), written by hand (docs/DECISIONS.md 302):
 * metric families as data, and the text they come to. Pure. Families are written sorted by name, each
 * with one `# HELP` and one `# TYPE` line and every series of it together; label values are escaped as
 * the format says (`\\`, `\"`, `\n`), lone surrogates become U+FFFD (the text is valid UTF-8), other
 * control characters are shown as `\xNN` text.
 */

export type MetricType = "counter" | "gauge" | "histogram"

/** One sample: the family's name plus `suffix` (`_bucket`, `_sum`, `_count`, or none), its labels in order, its value. */
export interface Sample {
  readonly suffix?: string
  readonly labels: ReadonlyArray<readonly [string, string]>
  readonly value: number
}

export interface Family {
  readonly name: string
  readonly help: string
  readonly type: MetricType
  readonly samples: ReadonlyArray<Sample>
}

/** The format's content type (`Content-Type` of `/metrics`). */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
// C0 controls but the newline (escaped by the format), DEL and C1 controls
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F]/g

/** Text made valid UTF-8 (lone surrogates → U+FFFD) with control characters other than the newline shown as `\xNN`. */
const wellFormed = (s: string): string =>
  s.replace(LONE_SURROGATE, "\uFFFD").replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)

/** A label value as the format writes it between its quotes. */
export const escapeLabelValue = (s: string): string =>
  wellFormed(s).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")

/** A `# HELP` text: backslash and newline escaped. */
export const escapeHelp = (s: string): string => wellFormed(s).replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

/** A sample value as Prometheus writes it: integers plain, `+Inf`, `-Inf`, `NaN`; -0 as 0. */
export const formatValue = (n: number): string => {
  if (Number.isNaN(n)) return "NaN"
  if (n === Number.POSITIVE_INFINITY) return "+Inf"
  if (n === Number.NEGATIVE_INFINITY) return "-Inf"
  if (Object.is(n, -0)) return "0"
  // JavaScript writes 1e21 and above, and below 1e-6, with an exponent: Go's ParseFloat reads both forms
  return String(n)
}

/** A metric or label name the format accepts. */
export const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
export const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

const sampleLine = (name: string, s: Sample): string => {
  const labels = s.labels.length === 0 ? "" : `{${s.labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(",")}}`
  return `${name}${s.suffix ?? ""}${labels} ${formatValue(s.value)}`
}

const byName = (a: Family, b: Family): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** The exposition of `families`: sorted by name, families of one name merged, each line ending in a newline. */
export const renderExposition = (families: ReadonlyArray<Family>): string => {
  const merged = new Map<string, Family>()
  for (const f of families) {
    const had = merged.get(f.name)
    merged.set(f.name, had === undefined ? f : { ...had, samples: [...had.samples, ...f.samples] })
  }
  const out: Array<string> = []
  for (const f of [...merged.values()].sort(byName)) {
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`)
    for (const s of f.samples) out.push(sampleLine(f.name, s))
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`
}

/** Label values compared in order (series of a family written in a stable order). */
export const compareLabels = (a: ReadonlyArray<readonly [string, string]>, b: ReadonlyArray<readonly [string, string]>): number => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]![1]
    const y = b[i]![1]
    if (x !== y) return x < y ? -1 : 1
  }
  return a.length - b.length
}
