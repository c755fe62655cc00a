import { defineConfig } from "vitest/config"

// The real-opencode end-to-end tests (test/e2e). Slow, sequential, one fork at a time: each file
// starts its own opencode server (about 0.6 GB RSS) and fake LLM on 127.0.0.1.
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.test.ts"],
    environment: "node",
    // a temporary HOME for the run; the run fails if the real one changed (test/support/homeGuard.ts)
    globalSetup: ["test/support/homeGuard.ts"],
    // and each test file one of its own (test/support/fileHome.ts)
    setupFiles: ["test/support/fileHome.ts"],
    pool: "forks",
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 240_000
  }
})
