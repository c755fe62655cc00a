/** Short sequences several e2e files drive the real opencode through. */
import { sleep, type OpencodeHandle } from "./harness.js"

/**
 * A new root session (titled `title` when given) that spawns one `explore` with `childPrompt`; waits
 * until the child is created. Returns the root, the child and the turn's mark.
 */
export const spawnExplore = async (
  oc: OpencodeHandle,
  childPrompt: string,
  timeoutMs: number,
  title?: string
): Promise<{ readonly session: string; readonly child: string; readonly mark: number }> => {
  const session = (await oc.createSession(title === undefined ? undefined : { title })).id
  const mark = await oc.prompt(session, `spawn [[task:explore:${childPrompt}]]`)
  const created = await oc.waitForEvent((e) => e.type === "session.created" && e.properties["info"]?.parentID === session, timeoutMs, mark)
  return { session, child: String(created.properties["info"].id), mark }
}

/** `spawnExplore`, then waits until the root's turn is over. */
export const exploreTree = async (oc: OpencodeHandle, childPrompt: string, timeoutMs: number, title?: string): Promise<{ readonly session: string; readonly child: string; readonly mark: number }> => {
  const tree = await spawnExplore(oc, childPrompt, timeoutMs, title)
  await oc.waitIdle(tree.session, tree.mark, timeoutMs)
  return tree
}

/** `f()` polled every 100 ms until `ok` holds or `timeoutMs` ran out; the last value either way. */
export const until = async <A>(f: () => A | Promise<A>, ok: (a: A) => boolean, timeoutMs: number): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const a = await f()
    if (ok(a) || Date.now() > deadline) return a
    await sleep(100)
  }
}

/** Waits (up to 10 s) until opencode lists no session as running: nothing is busy before the server goes. */
export const untilQuiet = async (oc: OpencodeHandle): Promise<void> => {
  for (let i = 0; i < 100 && Object.keys(await oc.status()).length > 0; i++) await sleep(100)
}
