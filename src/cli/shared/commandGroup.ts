/** A command that only groups others (`ocpool sweep`, `ocpool fleet`, …): its name, its help line and its subcommands, in one place. */
import { Command } from "@effect/cli"

type Subcommands = readonly [Command.Command<any, any, any, any>, ...Array<Command.Command<any, any, any, any>>]

/** `Command.make(name)` with its description and subcommands; the group itself does nothing when run alone (@effect/cli shows its help). */
export const commandGroup = <const Name extends string, const Subs extends Subcommands>(name: Name, description: string, subcommands: Subs) =>
  Command.make(name).pipe(Command.withDescription(description), Command.withSubcommands(subcommands))
