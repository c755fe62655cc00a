import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/stress/**/*.test.ts"],
    environment: "node",
    // a temporary HOME for the run; the run fails if the real one changed (test/support/homeGuard.ts)
    globalSetup: ["test/support/homeGuard.ts"],
    pool: "forks",
    testTimeout: 300_000
  }
})
