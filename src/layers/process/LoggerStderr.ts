/**
 * `Effect.log*` of the CLI: one line on stderr, `ocpool <level>: <message>` (the message and the
 * cause's first line, as LoggerAppLog renders them; line breaks become spaces), in place of Effect's
 * default logger. stdout stays the command's output alone.
 */
import { Layer, Logger } from "effect"
import { appLevelOf, lineOf } from "../opencode/LoggerAppLog.js"

export const stderrLine = (level: string, text: string): string => `ocpool ${level}: ${text.replace(/[\r\n]+/g, " ")}\n`

export const stderrLogger = Logger.make<unknown, void>(({ logLevel, message, cause }) => {
  process.stderr.write(stderrLine(appLevelOf(logLevel), lineOf(message, cause)))
})

export const LoggerStderr: Layer.Layer<never> = Logger.replace(Logger.defaultLogger, stderrLogger)
