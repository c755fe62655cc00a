/**
 * What the file system says of a project's context map (epic G): which of the five map files exist,
 * their sizes and modification times, and the user's `manager.md`. The facts are gathered by the
 * ContextStore service; these functions judge them. Pure.
 */
import { MANAGER_FILE, MAP_FILES } from "./map.js"

export interface MapFileFacts {
  readonly name: string
  readonly bytes: number
  readonly mtimeMs: number
  /** The user's `manager.md`: shown, never counted in the map's size or changes. */
  readonly manager?: true
}

export interface MapFacts {
  /** Whether the map directory exists. */
  readonly exists: boolean
  /** The five map files that exist (in MAP_FILES order), then `manager.md` when present. */
  readonly files: ReadonlyArray<MapFileFacts>
}

/** A project without a map directory. */
export const NO_MAP: MapFacts = { exists: false, files: [] }

const MAP_NAMES: ReadonlySet<string> = new Set(MAP_FILES)

/** The five map files among the facts (`manager.md` and anything else left out). */
export const mapFiles = (facts: MapFacts): ReadonlyArray<MapFileFacts> => facts.files.filter((f) => f.manager !== true && MAP_NAMES.has(f.name))

/** `manager.md`'s facts, when it is present. */
export const managerFile = (facts: MapFacts): MapFileFacts | undefined => facts.files.find((f) => f.manager === true && f.name === MANAGER_FILE)

/** The size of the map: the five files together, `manager.md` not counted. */
export const mapBytes = (facts: MapFacts): number => mapFiles(facts).reduce((sum, f) => sum + f.bytes, 0)

/** When a map file was last written (the latest mtime of the five), or undefined when none exists. */
export const lastWritten = (facts: MapFacts): number | undefined => {
  const files = mapFiles(facts)
  return files.length === 0 ? undefined : Math.max(...files.map((f) => f.mtimeMs))
}

/** Whether the five files together are larger than `maxBytes`. */
export const overBudget = (facts: MapFacts, maxBytes: number): boolean => mapBytes(facts) > maxBytes
