/**
 * The heavy-command check's cost (`npm run bench:heavy`, not part of CI): `heavyOf` over 10,000 realistic
 * bash commands (light: ls, git, rg, pipes, long heredocs and commit messages; heavy: builds and test
 * runs in chains), next to a bare `String.prototype.includes` over the same commands measured in the same
 * run. Prints p50/p99 in ms and the ratios; exits 1 when the light p99 is above 0.05 ms (issue 21).
 */
import { compileHeavyRules, heavyOf } from "../src/core/permits/heavy.js"
import { arg, rng } from "./common.js"

const N = arg("commands", 10_000)
const ROUNDS = arg("rounds", 5)
const LIGHT_P99_MAX_MS = 0.05

const random = rng(21)
const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]!
const word = () => pick(["src", "test", "docs", "lib", "core", "layers", "plugin", "permits", "state", "engine"])
const file = () => `${word()}/${word()}/${pick(["index", "main", "heavy", "facts", "types"])}.${pick(["ts", "md", "json"])}`

const codeLine = (i: number) =>
  pick([
    `export const f${i} = (x: number): number => x * ${i} // make sure it is fast`,
    `  if (value === undefined) return { state: "gone", cause: "npm test" }`,
    `  for (const entry of entries) total += entry.weight; // cargo build && make`,
    `import { Effect, Layer } from "effect"`,
    `  const text = \`\${name}: \${JSON.stringify(value)}\``,
    `  # not a comment in a heredoc; 'quotes' "too" | pipes & ampersands`
  ])

const heredoc = () => {
  const lines = Array.from({ length: 20 + Math.floor(random() * 200) }, (_, i) => codeLine(i))
  return `cat > ${file()} <<'EOF'\n${lines.join("\n")}\nEOF`
}

const LIGHT: ReadonlyArray<() => string> = [
  () => "ls",
  () => `ls -la ${word()}/`,
  () => "git status",
  () => "git diff --stat",
  () => `git log --oneline -n ${1 + Math.floor(random() * 30)}`,
  () => `rg foo ${word()}`,
  () => `rg -n "heavyOf|compileHeavyRules" ${word()} --type ts`,
  () => `cat ${file()} | head -n 40`,
  () => `sed -n '${1 + Math.floor(random() * 200)},+40p' ${file()}`,
  () => `find ${word()} -name '*.ts' | xargs wc -l | sort -n | tail -5`,
  () => `cd ${word()} && ls && git status --short`,
  () => `echo "build finished" && date`,
  () => `grep -rn "npm test" docs/ || true`,
  () => `git add -A && git commit -m "${Array.from({ length: 8 }, () => `Fix the ${word()} of ${word()}; make tests pass`).join("\n")}"`,
  () => `mkdir -p ${word()}/${word()} && touch ${file()}`,
  heredoc,
  heredoc
]

const HEAVY: ReadonlyArray<() => string> = [
  () => "npm test",
  () => `cd ${word()} && npm run build`,
  () => "npx vitest run test/core",
  () => "CI=1 cargo test --workspace 2>&1 | tail -n 80",
  () => "go test ./... -race",
  () => "make -j4 && make install",
  () => "docker build -t app .",
  () => "timeout 600 pytest -x tests/",
  () => `cat > ${file()} <<'EOF'\nexport {}\nEOF\nnpx tsc --noEmit -p .`
]

const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!
}
const ms = (x: number) => `${x.toFixed(5)} ms`

const rules = compileHeavyRules()
const commands = Array.from({ length: N }, (_, i) => (i % 5 === 4 ? { heavy: true, text: pick(HEAVY)() } : { heavy: false, text: pick(LIGHT)() }))
let wrong = 0
for (const c of commands) if ((heavyOf(c.text, rules) !== undefined) !== c.heavy) wrong++

let sink = 0
const light: Array<number> = []
const heavy: Array<number> = []
const ref: Array<number> = []
for (let round = 0; round < ROUNDS + 1; round++) {
  const measured = round > 0 // the first round warms the JIT up
  for (const c of commands) {
    const t0 = process.hrtime.bigint()
    const r = heavyOf(c.text, rules)
    const t1 = process.hrtime.bigint()
    if (r !== undefined) sink += r.weight
    if (measured) (c.heavy ? heavy : light).push(Number(t1 - t0) / 1e6)
  }
  for (const c of commands) {
    const t0 = process.hrtime.bigint()
    const r = c.text.includes("npm test")
    const t1 = process.hrtime.bigint()
    if (r) sink++
    if (measured) ref.push(Number(t1 - t0) / 1e6)
  }
}

const l50 = quantile(light, 0.5)
const l99 = quantile(light, 0.99)
const h50 = quantile(heavy, 0.5)
const h99 = quantile(heavy, 0.99)
const r50 = quantile(ref, 0.5)
const r99 = quantile(ref, 0.99)
const chars = Math.round(commands.reduce((n, c) => n + c.text.length, 0) / commands.length)
console.log(`heavy bench: ${N} commands (${commands.filter((c) => c.heavy).length} heavy, mean ${chars} chars) x ${ROUNDS} rounds, node ${process.version} (sink ${sink})`)
console.log(`heavyOf, light commands: p50 ${ms(l50)}  p99 ${ms(l99)}  (limit p99 <= ${LIGHT_P99_MAX_MS} ms)`)
console.log(`heavyOf, heavy commands: p50 ${ms(h50)}  p99 ${ms(h99)}`)
console.log(`reference String.includes: p50 ${ms(r50)}  p99 ${ms(r99)}`)
console.log(`ratio light/reference: p50 ${(l50 / r50).toFixed(1)}  p99 ${(l99 / r99).toFixed(1)}`)
if (wrong > 0) {
  console.log(`FAIL: ${wrong} commands judged wrongly`)
  process.exit(1)
}
if (l99 > LIGHT_P99_MAX_MS) {
  console.log(`FAIL: light p99 ${ms(l99)} above ${LIGHT_P99_MAX_MS} ms`)
  process.exit(1)
}
