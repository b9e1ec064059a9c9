import { describe, expect, it } from "vitest";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import type { CheckReport, Reporter } from "../reports/types.js";
import type { Check } from "../suites/harness/check.js";
import { runSuite } from "./helpers.js";

/** A check that passes the fixed pass and finds `later` every time after: only --duration's rounds see it. */
function laterFinds(later: "warn" | "fail"): Check {
  let runs = 0;
  return {
    id: "method.ping/later",
    rules: ["method.ping"],
    description: "passes once, then finds a fault on every run",
    async run() {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return runs++ === 0
        ? { verdict: "pass", message: "first run" }
        : { verdict: later, message: `run ${runs}`, rules: ["method.ping"] };
    },
  };
}

/** The results the reporters were told of, in order. */
function told(): { reporter: Reporter; ends: CheckReport[] } {
  const ends: CheckReport[] = [];
  return { reporter: { name: "told", onCheckEnd: (_info, result) => void ends.push(result) }, ends };
}

describe("--duration writes what it finds as the fixed pass does", () => {
  it("a warning found while fuzzing fails under --strict, and the reporters are told", async () => {
    const { reporter, ends } = told();
    const report = await runSuite((token) => new ReferenceBridge({ token }), {
      checks: [laterFinds("warn")],
      strict: true,
      durationMs: 2500,
      reporters: [reporter],
    });
    const check = report.rules.flatMap((r) => r.checks).find((c) => c.id === "method.ping/later");
    expect(check).toMatchObject({ verdict: "fail", message: expect.stringMatching(/--strict makes it a failure/) });
    expect(ends.map((e) => e.verdict)).toEqual(["pass", "fail"]);
  });

  it("a failure found while fuzzing is rechecked", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token }), {
      checks: [laterFinds("fail")],
      recheck: 2,
      durationMs: 2500,
    });
    const check = report.rules.flatMap((r) => r.checks).find((c) => c.id === "method.ping/later");
    expect(check).toMatchObject({ verdict: "fail", reproduced: { tries: 2, failed: 2, grade: "consistent" } });
  });
});
