/** Cooldown files in the state directory (SPEC §5.4); synchronous, as they are read inside the pool lock. */
import { Effect, Layer } from "effect"
import { join } from "node:path"
import type { Cooldown } from "../../core/cooldown.js"
import { COOLDOWN_FILE, cooldownFileName, decodeCooldown, encodeCooldown, isCooldownExpired } from "../../core/cooldownFile.js"
import { CooldownStore, CooldownStoreError } from "../../services/state/CooldownStore.js"
import { StateDir } from "../../services/state/StateDir.js"
import { writeFileAtomic } from "../fs/atomicWrite.js"
import { decodedFileCache, quietUnlink } from "../fs/fileCache.js"
import { liveStateFiles } from "./stateFiles.js"

export const CooldownStoreFile = Layer.effect(
  CooldownStore,
  Effect.gen(function* () {
    const { dir, trusted } = yield* StateDir
    // Expired and unparseable files are deleted only in a trusted directory (SPEC §2.1); elsewhere they are skipped.
    const clean = trusted === true
    // Without a usable state directory, cooldowns live in this process only (SPEC §2.1).
    const memory = new Map<string, Cooldown>()
    const files = decodedFileCache<Cooldown | undefined>(decodeCooldown)

    const readAll = (now: number) =>
      Effect.try({
        try: () => {
          if (dir === undefined) {
            for (const [m, c] of memory) if (isCooldownExpired(c, now)) memory.delete(m)
            return new Map(memory)
          }
          const table = new Map<string, Cooldown>()
          for (const { record } of liveStateFiles(dir, COOLDOWN_FILE, files, (c) => isCooldownExpired(c, now), clean)) table.set(record.model, record)
          return table
        },
        catch: (e) => new CooldownStoreError({ reason: `reading cooldowns: ${String(e)}` })
      })

    const write = (records: ReadonlyArray<Cooldown>) =>
      Effect.try({
        try: () => {
          for (const r of records) {
            if (dir === undefined) {
              memory.set(r.model, r)
              continue
            }
            const path = join(dir, cooldownFileName(r.model))
            writeFileAtomic(path, encodeCooldown(r))
          }
        },
        catch: (e) => new CooldownStoreError({ reason: `writing cooldowns: ${String(e)}` })
      })

    const remove = (model: string) =>
      Effect.try({
        try: () => {
          if (dir === undefined) {
            memory.delete(model)
            return
          }
          quietUnlink(join(dir, cooldownFileName(model)))
        },
        catch: (e) => new CooldownStoreError({ reason: String(e) })
      })

    return { readAll, write, remove }
  })
)
