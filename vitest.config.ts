import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Most of a test's time is spent waiting on a bridge's replies and game loop, not on the CPU: the
    // whole suite uses about one core of two while it runs two files at a time, so it runs three.
    maxWorkers: 3,
  },
});
