/**
 * The MCP server of `ocpool mcp` (issue 21): `@effect/ai`'s `McpServer` over newline-delimited JSON-RPC
 * on a pair of streams (the process's stdin and stdout), serving the permit tools (PermitsMcp.ts). Its
 * `initialize` answer carries instructions for the agent: McpServer has no option for them, so the
 * protocol under it adds them to that one answer.
 */
import { McpServer } from "@effect/ai"
import { RpcSerialization, RpcServer } from "@effect/rpc"
import { Effect, Fiber, Layer, Logger, Option, type Sink, Stream } from "effect"
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

/** A request id as the RPC server keys it (a decimal string; JSON-RPC id 0 is decoded as ""). */
const idKey = (id: unknown): string => {
  try {
    return String(BigInt(id as string))
  } catch {
    return String(id)
  }
}

/** Whether a JSON-RPC id is one the RPC server can take (it reads ids as integers). */
const usableId = (id: unknown): boolean => id === undefined || id === null || Number.isSafeInteger(id) || (typeof id === "string" && /^-?\d{1,15}$/.test(id))

/**
 * The lines of `stdin` the RPC server can parse: a line that is not a JSON object, or whose id is not an
 * integer, would make its parser throw and stop reading; it is dropped with one log line instead.
 */
const guarded = <E>(stdin: Stream.Stream<Uint8Array, E>): Stream.Stream<Uint8Array, E> => {
  const encoder = new TextEncoder()
  return stdin.pipe(
    Stream.decodeText(),
    Stream.splitLines,
    Stream.mapEffect((line) => {
      if (line.trim() === "") return Effect.succeed(Option.none())
      let message: unknown
      try {
        message = JSON.parse(line)
      } catch {
        message = undefined
      }
      const ok = typeof message === "object" && message !== null && !Array.isArray(message) && usableId((message as { id?: unknown }).id)
      return ok
        ? Effect.succeed(Option.some(encoder.encode(`${line}\n`)))
        : Effect.as(Effect.logWarning(`mcp: ignored a message that is not a JSON-RPC object with an integer id: ${line.slice(0, 120)}`), Option.none())
    }),
    Stream.filterMap((bytes) => bytes)
  )
}

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

export interface McpServerOptions<EIn, EOut> {
  readonly version: string
  readonly stdin: Stream.Stream<Uint8Array, EIn>
  readonly stdout: Sink.Sink<unknown, Uint8Array | string, unknown, EOut>
  /** Who holds this server's permits (default: this process, `via: "mcp"`). */
  readonly holder?: PermitHolder | undefined
}

/**
 * The running server: answers on `stdout` what arrives on `stdin` until the layer's scope closes, which
 * gives up every permit this server still holds or queued. Needs the `Permits` port.
 */
export const permitsMcpServer = <EIn, EOut>(options: McpServerOptions<EIn, EOut>) =>
  McpServer.toolkit(PermitsToolkit).pipe(
    Layer.provide(permitsMcpHandlers(options.holder)),
    Layer.provide(McpServer.layer({ name: "ocpool", version: options.version })),
    Layer.provide(withInstructions(MCP_INSTRUCTIONS)),
    Layer.provide(RpcServer.layerProtocolStdio({ stdin: guarded(options.stdin), stdout: options.stdout })),
    Layer.provide(RpcSerialization.layerNdJsonRpc()),
    // stdout is the protocol's: no log line may go there
    Layer.provide(Logger.remove(Logger.defaultLogger)),
    Layer.provide(Logger.remove(Logger.prettyLoggerDefault))
  )

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
