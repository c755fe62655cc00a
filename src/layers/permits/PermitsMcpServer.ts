/**
 * The MCP server of `ocpool mcp` (issue 21): `@effect/ai`'s `McpServer` over newline-delimited JSON-RPC
 * on a pair of streams (the process's stdin and stdout), serving the permit tools (PermitsMcp.ts). Its
 * `initialize` answer carries instructions for the agent: McpServer has no option for them, so the
 * protocol under it adds them to that one answer.
 */
import { McpSchema, McpServer } from "@effect/ai"
import { RpcSerialization, RpcServer } from "@effect/rpc"
import { Effect, Fiber, Layer, Logger, ParseResult, Schema, type Stream } from "effect"
import type { Methods } from "../../core/mcp/jsonRpc.js"
import { jsonRpcFront, type LineWriter } from "./jsonRpcFront.js"
import type { PermitHolder } from "../../core/permits/types.js"
import { PermitsToolkit, permitsMcpHandlers } from "./PermitsMcp.js"

/** What the agent is told when it connects. */
export const MCP_INSTRUCTIONS = [
  "Machine-wide permits for heavy work, shared by every agent and opencode session on this machine, so that builds and test suites take turns instead of thrashing it.",
  "Call permit_acquire right before heavy work (builds, test suites, package installs, container builds); light work (reading, editing, searching, git) needs no permit.",
  "When it answers queued, keep doing light work and call permit_wait now and then until it is granted (a queued request whose client does not come back within 30 s at the head of the queue is paused until it asks again).",
  "When you can, run the heavy command as `ocpool run -- CMD ARGS…` instead: it waits for the permit, holds it until the command and all its children have exited, and needs no acquire or release at all.",
  "Release with permit_release at once when the heavy work is done (also when it failed); permits still held when this server exits are released."
].join(" ")

/** A request id as the RPC server keys it (the front's integers; JSON-RPC id 0 is decoded as ""). */
const idKey = (id: unknown): string => {
  try {
    return String(BigInt(id as string))
  } catch {
    return String(id)
  }
}

/** The methods the MCP server answers, and whether a request's params fit (its own schemas). */
const mcpMethods: Methods = (() => {
  const requests = McpSchema.ClientRequestRpcs.requests
  const notifications = McpSchema.ClientNotificationRpcs.requests
  return {
    isRequest: (method) => requests.has(method),
    isNotification: (method) => notifications.has(method),
    paramsProblem: (method, params) => {
      const rpc = requests.get(method)
      if (rpc === undefined) return undefined
      const decoded = Schema.decodeUnknownEither(rpc.payloadSchema as Schema.Schema<unknown, unknown, never>)(params, { errors: "first" })
      if (decoded._tag === "Right") return undefined
      const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
      return issue === undefined ? "they do not fit the method" : `${issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""}${issue.message}`.slice(0, 300)
    }
  }
})()

/** The protocol with `instructions` added to the answer of each `initialize` request. */
const withInstructions = (instructions: string) =>
  Layer.effect(
    RpcServer.Protocol,
    Effect.map(RpcServer.Protocol, (protocol) => {
      const initializing = new Set<string>()
      return RpcServer.Protocol.of({
        ...protocol,
        run: (f) =>
          protocol.run((clientId, data) => {
            if (data._tag === "Request" && data.tag === "initialize") initializing.add(`${clientId}:${idKey(data.id)}`)
            return f(clientId, data)
          }),
        send: (clientId, response, transferables) => {
          if (response._tag === "Exit" && initializing.delete(`${clientId}:${idKey(response.requestId)}`) && response.exit._tag === "Success") {
            const value = response.exit.value
            if (typeof value === "object" && value !== null) return protocol.send(clientId, { ...response, exit: { ...response.exit, value: { ...value, instructions } } }, transferables)
          }
          return protocol.send(clientId, response, transferables)
        }
      })
    })
  )

export interface McpServerOptions<EIn> {
  readonly version: string
  readonly stdin: Stream.Stream<Uint8Array, EIn>
  /** Where the answers go, a line at a time (the process's stdout). */
  readonly stdout: LineWriter
  /** Who holds this server's permits (default: this process, `via: "mcp"`). */
  readonly holder?: PermitHolder | undefined
}

/**
 * The running server: answers on `stdout` what arrives on `stdin` until the layer's scope closes, which
 * gives up every permit this server still holds or queued. Needs the `Permits` port.
 */
export const permitsMcpServer = <EIn>(options: McpServerOptions<EIn>) => {
  // JSON-RPC 2.0 for any client: ids, batches, and the error codes the RPC layer does not give
  const front = jsonRpcFront(options.stdin, options.stdout, mcpMethods)
  return McpServer.toolkit(PermitsToolkit).pipe(
    Layer.provide(permitsMcpHandlers(options.holder)),
    Layer.provide(McpServer.layer({ name: "ocpool", version: options.version })),
    Layer.provide(withInstructions(MCP_INSTRUCTIONS)),
    Layer.provide(RpcServer.layerProtocolStdio({ stdin: front.input, stdout: front.output })),
    Layer.provide(RpcSerialization.layerNdJsonRpc()),
    // stdout is the protocol's: no log line may go there
    Layer.provide(Logger.remove(Logger.defaultLogger)),
    Layer.provide(Logger.remove(Logger.prettyLoggerDefault))
  )
}

/** Resolves once the process's standard input has ended or closed (the client went away). */
const stdinClosed: Effect.Effect<void> = Effect.async<void>((resume) => {
  const done = () => resume(Effect.void)
  process.stdin.once("end", done)
  process.stdin.once("close", done)
  return Effect.sync(() => {
    process.stdin.off("end", done)
    process.stdin.off("close", done)
  })
})

/**
 * Runs a server on the process's stdio until stdin closes (or the process is signalled: the runtime
 * interrupts this fiber). The server runs on a fiber of its own, so the protocol's own interruption when
 * stdin ends stops the server only; either way its finalizers give up its permits first.
 */
export const serveMcp = <E>(server: Layer.Layer<never, E>): Effect.Effect<void, E> =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(Effect.raceFirst(Layer.launch(server), stdinClosed))
    // interrupted (a signal): wait for the server's finalizers before the process may end
    const exit = yield* Fiber.await(fiber).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber)))
    if (exit._tag === "Failure" && exit.cause._tag === "Fail") return yield* Effect.fail(exit.cause.error)
  })
