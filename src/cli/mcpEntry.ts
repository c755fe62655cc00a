/**
 * The MCP server entry `ocpool init --mcp` writes (issue 21), as each harness's config holds it: one
 * JSON value (`mcpServers.ocpool`) or one TOML table (`[mcp_servers.ocpool]`), running this
 * installation (`ocpool mcp` from PATH, or the absolute command); and the three snippets `--mcp print` shows.
 */
import { commandLine, mcpServerOf, notOnPathNote, PATH_SERVER, type InvocationFacts, type ServerCommand } from "../core/invocation.js"
import { invocationFacts, invocationHere } from "../layers/install/installation.js"

export const NAME = "ocpool"
/** An entry as one JSON value (a JS string: byteTextOf makes it bytes for the JSON editor). */
export const jsonValue = (server: ServerCommand): string => `{ "command": ${JSON.stringify(server.command)}, "args": [${server.args.map((a) => JSON.stringify(a)).join(", ")}] }`
export const TOML_HEADER = "[mcp_servers.ocpool]"
/** A TOML basic string (JSON's escapes are TOML's; DEL must be escaped too). */
export const tomlString = (s: string): string => JSON.stringify(s).replace(/\x7f/g, "\\u007f")
export const tomlArray = (xs: ReadonlyArray<string>): string => `[${xs.map(tomlString).join(", ")}]`

/** The entry this installation writes for the PATH of `env` (`ocpool mcp`, or the absolute command), and the facts it came from. */
export const serverHere = (env: NodeJS.ProcessEnv = process.env): { readonly server: ServerCommand; readonly facts: InvocationFacts | undefined } => {
  const facts = invocationFacts(env)
  return { server: facts === undefined ? PATH_SERVER : mcpServerOf(facts), facts }
}

/** The three snippets `--mcp print` shows, with the entry that runs this installation from the PATH of `env`. */
export const mcpSnippets = (env: NodeJS.ProcessEnv = process.env): string => {
  const { server, facts } = serverHere(env)
  const note = facts === undefined ? undefined : notOnPathNote(facts)
  return [
    "claude-code: in ~/.claude.json",
    `  "mcpServers": { "${NAME}": ${jsonValue(server)} }`,
    "cursor: in ~/.cursor/mcp.json",
    `  "mcpServers": { "${NAME}": ${jsonValue(server)} }`,
    "codex: in ~/.codex/config.toml",
    `  ${TOML_HEADER}`,
    `  command = ${tomlString(server.command)}`,
    `  args = ${tomlArray(server.args)}`,
    ...(note === undefined ? [] : [note]),
    // one runnable command per harness: `claude-code|codex|cursor` pasted into a shell is two pipes
    `or let ocpool add it: ${commandLine(invocationHere(env), "init --mcp claude-code")} (or codex, or cursor)`
  ].join("\n")
}
