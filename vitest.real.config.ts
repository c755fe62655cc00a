import { defineConfig } from "vitest/config"

// Tests against real external programs (test/real): a real sshd on 127.0.0.1 with a forced command,
// a private D-Bus session bus with python-dbusmock's notification daemon, notify-send, gdbus.
// Needs the Debian packages of scripts/ci-real-deps.sh. Sequential, one fork at a time.
export default defineConfig({
  test: {
    include: ["test/real/**/*.real.test.ts"],
    environment: "node",
    // a temporary HOME for the run; the run fails if the real one changed (test/support/homeGuard.ts)
    globalSetup: ["test/support/homeGuard.ts"],
    // and each test file one of its own (test/support/fileHome.ts)
    setupFiles: ["test/support/fileHome.ts"],
    pool: "forks",
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000
  }
})
