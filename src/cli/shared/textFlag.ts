/** The optional text flag every command declares the same way; alone in its module, so the commands that need nothing else of flags.ts (notify, tunnel, fleet) load only this. */
import { Options } from "@effect/cli"

/** An optional text flag with its pseudo-name and help line; its value is parsed by the command, so a bad one is never usage noise. */
export const text = (name: string, pseudo: string, description: string) =>
  Options.text(name).pipe(Options.withPseudoName(pseudo), Options.withDescription(description), Options.optional)
