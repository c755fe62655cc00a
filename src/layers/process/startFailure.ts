/**
 * Why a command of `ocpool run` cannot be started (issue 21), as a shell would say it: 127 not found,
 * 126 found but not runnable. `unrunnable` finds it before the spawn, for a command held behind the
 * runner's gate (whose shell would otherwise be the one to say it); `spawnFailure` names a spawn's own
 * error the same way.
 */
import { accessSync, constants as fsConstants, statSync } from "node:fs"
import { join } from "node:path"
import { Data } from "effect"

/** The command could not be started: 127 not found, 126 found but not runnable; `message` is the line to print (without `ocpool: `). */
export class GroupSpawnFailed extends Data.TaggedError("GroupSpawnFailed")<{ readonly code: 126 | 127; readonly message: string }> {}

export const spawnFailure = (cmd: string, e: unknown): GroupSpawnFailed => {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  if (code === "ENOENT") return new GroupSpawnFailed({ code: 127, message: `${cmd}: command not found` })
  const reason =
    code === "EACCES" || code === "EPERM"
      ? "permission denied"
      : code === "ENOEXEC"
        ? "exec format error"
        : code === "EISDIR"
          ? "is a directory"
          : ((e instanceof Error ? e.message : String(e)).split("\n")[0] ?? "unknown error").slice(0, 200)
  return new GroupSpawnFailed({ code: 126, message: `${cmd}: cannot run: ${reason}` })
}

/**
 * Whether `cmd` can be started as `spawn` would find it (PATH for a bare name): the failure `spawn`
 * would give, found before the command is held back behind the gate (whose shell would say it otherwise).
 */
export const unrunnable = (cmd: string, env: NodeJS.ProcessEnv): GroupSpawnFailed | undefined => {
  if (cmd.includes("\0")) return undefined // spawn itself refuses it, with its own reason
  const usable = (path: string): "ok" | "missing" | GroupSpawnFailed => {
    try {
      if (statSync(path).isDirectory()) return spawnFailure(cmd, Object.assign(new Error("is a directory"), { code: "EISDIR" }))
      accessSync(path, fsConstants.X_OK)
      return "ok"
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      return code === "ENOENT" || code === "ENOTDIR" ? "missing" : spawnFailure(cmd, e)
    }
  }
  if (cmd.includes("/")) {
    const r = usable(cmd)
    return r === "ok" ? undefined : r === "missing" ? spawnFailure(cmd, Object.assign(new Error("missing"), { code: "ENOENT" })) : r
  }
  let first: GroupSpawnFailed | undefined
  for (const dir of (env.PATH ?? "").split(":")) {
    const r = usable(join(dir === "" ? "." : dir, cmd))
    if (r === "ok") return undefined
    if (r !== "missing") first ??= r
  }
  return first ?? spawnFailure(cmd, Object.assign(new Error("missing"), { code: "ENOENT" }))
}
