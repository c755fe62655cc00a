import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/stress/**/*.test.ts"],
    environment: "node",
    pool: "forks",
    testTimeout: 300_000
  }
})
