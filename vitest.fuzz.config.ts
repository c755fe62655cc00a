import { defineConfig } from "vitest/config"

// The fuzz suite with its CI case count: FUZZ_RUNS cases per family (default here 10,000).
process.env.FUZZ_RUNS ??= "10000"

export default defineConfig({
  test: {
    include: ["test/fuzz/**/*.test.ts"],
    environment: "node",
    pool: "forks",
    testTimeout: 600_000
  }
})
