import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contract } from "../protocol/contract.js";
import { cli, problems, readReport, TEST_TOKEN } from "./helpers.js";

// A second conformant bridge, written apart from the reference in the standard library of Python 3: the suite passes
// it too, with no warning but the leniencies the README's policy table lists, so verdicts are not tuned to one bridge.
const hasPython = spawnSync("python3", ["--version"]).status === 0;
const BRIDGE = "python3 bridges/python/bridge.py --port 0";
const dir = mkdtempSync(join(tmpdir(), "aicc-python-"));

/** The warnings the policy table allows this bridge: Python's json reads a long fraction into a double. */
const ALLOWED_WARNINGS = [{ check: "wire.response-envelope/precise-id", message: /nearest double|was refused/ }];

const SIZES: [string, string][] = [
  ["default limits", ""],
  ["the smallest legal limits (queue 1, history 1)", " --max-commands 1 --max-events 1"],
];

describe.skipIf(!hasPython)("the Python bridge (bridges/python/bridge.py), spawned, at the quick profile", () => {
  it.each(SIZES)(
    "passes every check at %s, warning only where the policy allows",
    async (_name, limits) => {
      const json = join(dir, `${limits.length}.json`);
      const { code, out } = await cli(["--spawn", `${BRIDGE}${limits}`, "--profile", "quick", "--json", json], {
        ...process.env,
        FONLINE_AI_TOKEN: TEST_TOKEN,
      });
      const report = readReport(json);
      expect(problems(report), out.slice(-3000)).toEqual([]);
      expect(code).toBe(0);
      expect(report.rules).toHaveLength(contract.rules.length);
      const warnings = report.rules.flatMap((r) => r.checks.filter((c) => c.verdict === "warn"));
      for (const w of warnings)
        expect(
          ALLOWED_WARNINGS.some((a) => a.check === w.id && a.message.test(w.message)),
          `${w.id}: ${w.message}`,
        ).toBe(true);
      // Authorization was exercised: the token reached the bridge through its environment variable.
      expect(report.rules.find((r) => r.id.endsWith(".error.unauthorized"))?.verdict).toBe("pass");
    },
    60_000,
  );
});

if (!hasPython) it.skip("the Python bridge: python3 is not installed, so it cannot be spawned", () => {});
