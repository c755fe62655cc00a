import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    // the cross-process stress tests, and the slow cases `npm test` leaves out (*.slow.test.ts: real back-offs, crashes)
    include: ["test/stress/**/*.test.ts", "test/**/*.slow.test.ts"],
    environment: "node",
    // a temporary HOME for the run; the run fails if the real one changed (test/support/homeGuard.ts)
    globalSetup: ["test/support/homeGuard.ts"],
    // and each test file one of its own (test/support/fileHome.ts)
    setupFiles: ["test/support/fileHome.ts"],
    pool: "forks",
    testTimeout: 300_000
  }
})
