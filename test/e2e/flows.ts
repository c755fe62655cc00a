/** Short sequences several e2e files drive the real opencode through. */
import { sleep, type OpencodeHandle } from "./harness.js"

/**
 * A new root session (titled `title` when given) that spawns one `explore` with `childPrompt`; waits
 * until the child is created and the root's turn is over. Returns the root, the child and the turn's mark.
 */
export const exploreTree = async (
  oc: OpencodeHandle,
  childPrompt: string,
  timeoutMs: number,
  title?: string
): Promise<{ readonly session: string; readonly child: string; readonly mark: number }> => {
  const session = (await oc.createSession(title === undefined ? undefined : { title })).id
  const mark = await oc.prompt(session, `spawn [[task:explore:${childPrompt}]]`)
  const created = await oc.waitForEvent((e) => e.type === "session.created" && e.properties["info"]?.parentID === session, timeoutMs, mark)
  await oc.waitIdle(session, mark, timeoutMs)
  return { session, child: String(created.properties["info"].id), mark }
}

/** Waits (up to 10 s) until opencode lists no session as running: nothing is busy before the server goes. */
export const untilQuiet = async (oc: OpencodeHandle): Promise<void> => {
  for (let i = 0; i < 100 && Object.keys(await oc.status()).length > 0; i++) await sleep(100)
}
