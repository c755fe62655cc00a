/** Active fallbacks in this process only (tests): the file layer's rules without a directory. */
import { Layer } from "effect"
import { FallbackStore } from "../../services/state/FallbackStore.js"
import { fallbackStoreOn } from "./FallbackStoreFile.js"

export const FallbackStoreMemory = Layer.sync(FallbackStore, () => fallbackStoreOn(undefined, false))
