/** The package version: put in by the build (scripts/build.mjs, `define`); `0.0.0-dev` when run from the sources (tests). */
declare const OCPOOL_VERSION: string | undefined

export const VERSION: string = typeof OCPOOL_VERSION === "string" ? OCPOOL_VERSION : "0.0.0-dev"
