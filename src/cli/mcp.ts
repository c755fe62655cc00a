/**
 * `ocpool mcp [--state-dir DIR]` (issue 21): the machine-wide permits as a stdio MCP server for every
 * agent harness other than opencode (whose plugin gates heavy commands by itself). Tools:
 * `permit_acquire`, `permit_wait`, `permit_release`, `permit_status` (src/layers/permits/PermitsMcp.ts).
 * It serves until stdin closes or it is signalled; then every permit it still holds or queued is given up.
 */
import { Command } from "@effect/cli"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect, Layer } from "effect"
import { permitsMcpServer, serveMcp } from "../layers/permits/PermitsMcpServer.js"
import { permitsCliLayer } from "./shared/permits.js"
import { stateDirOption } from "./status.js"

declare const OCPOOL_VERSION: string | undefined
const version = typeof OCPOOL_VERSION === "string" ? OCPOOL_VERSION : "0.0.0-dev"

export const mcpCommand = Command.make("mcp", { stateDir: stateDirOption }, (args) =>
  Effect.gen(function* () {
    const server = permitsMcpServer({ version, stdin: NodeStream.stdin, stdout: process.stdout })
    yield* serveMcp(server.pipe(Layer.provide(permitsCliLayer(args.stateDir))))
  })
).pipe(
  Command.withDescription(
    "Serve the machine-wide permits for heavy work over MCP on stdin/stdout, for agent harnesses other than opencode (add it with: ocpool init --mcp claude-code|codex|cursor). Tools: permit_acquire {reason, weight?, budget?, wait_ms?}, permit_wait {request, wait_ms}, permit_release {token}, permit_status. Requests are held by this server process; when stdin closes or it is signalled, every permit it holds or queued is given up."
  )
)
