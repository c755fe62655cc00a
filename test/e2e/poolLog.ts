/**
 * opencode-pool's lines in opencode's log. opencode 1.18.33 prints `client.app.log` entries as
 * `... message="<text>"` followed by the `extra` annotations only (the plugin puts `service=opencode-pool`
 * there, issue 33); they are recognised by how they start.
 */
const OURS = /message="((?:routed|cooling|released|reaped|reaper armed|reaper failed|bound|spinning|abort|refused manual|pool reloaded|pool lock busy|routing failed|model \S+ unavailable|provider \S+ rejected|state dir|trace |publishing|reading|writing|Switched to|context map|session \S+(?: was not switched|: message on))[^"]*)"/

export const poolLogLines = (log: string): Array<string> =>
  log.split("\n").flatMap((line) => {
    const m = OURS.exec(line)
    if (m !== null) return [m[1]!.replace(/\\"/g, '"')]
    // the stderr fallback (when the log call itself fails)
    const f = /^opencode-pool (?:debug|info|warn|error): (.*)$/.exec(line)
    return f === null ? [] : [f[1]!]
  })
