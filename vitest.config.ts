import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The longest files, longest first (measured on 2 cores), so none of them starts last and runs alone at the end.
 * Vitest's own order reads durations from a cache that runs of a few files overwrite, so it cannot be relied on.
 */
const LONGEST = [
  "blame",
  "client",
  "export-mutants",
  "cli",
  "scale",
  "pack",
  "limits",
  "diagnosis",
  "spawn",
  "load",
  "mutants",
].map((name) => `test/${name}.test.ts`);

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST.findIndex((name) => f.moduleId.endsWith(`/${name}`));
      return i < 0 ? LONGEST.length : i;
    };
    // Array.prototype.sort is stable: the rest keep the base order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Most of a test's time is spent waiting on a bridge's replies and game loop, not on the CPU: the
    // whole suite uses about one core of two while it runs two files at a time, so it runs three.
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
  },
});
