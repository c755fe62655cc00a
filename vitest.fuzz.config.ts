import { defineConfig } from "vitest/config"

// The fuzz suite with its CI case count: FUZZ_RUNS cases per family (default here 10,000).
process.env.FUZZ_RUNS ??= "10000"

export default defineConfig({
  test: {
    include: ["test/fuzz/**/*.test.ts"],
    environment: "node",
    // a temporary HOME for the run; the run fails if the real one changed (test/support/homeGuard.ts)
    globalSetup: ["test/support/homeGuard.ts"],
    // and each test file one of its own (test/support/fileHome.ts)
    setupFiles: ["test/support/fileHome.ts"],
    pool: "forks",
    testTimeout: 600_000
  }
})
