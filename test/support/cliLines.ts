/** What the CLI's diagnostics look like, checked the same way by every test that runs a command in-process. */
import { expect } from "@effect/vitest"

/** One diagnostic line starting `ocpool: ` and matching `words`, nothing on stdout, exit 2. */
export const oneLine = (r: { code: number; stdout: string; stderr: string }, words: RegExp): void => {
  expect(r.code).toBe(2)
  expect(r.stdout).toBe("")
  const lines = r.stderr.trimEnd().split("\n")
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(/^ocpool: /)
  expect(lines[0]).toMatch(words)
}
