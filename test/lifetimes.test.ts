import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { type Step, sessionStep } from "../generators/sessionStep.js";
import type { Report } from "../reports/types.js";
import { BURST_KIB, CELLS, ENDINGS, sizeName } from "../suites/harness/cells.js";
import { allChecks } from "../suites/index.js";
import { runSuite } from "./helpers.js";

// Resource lifetimes and volumes as state: connections ended every way, many lines in one write, one id across
// methods and connections. Each fault of these is found on its own rule at quick and standard, and the reference
// bridge reaches every one of these cells, also at the smallest limits.

const DEEP = "validation.protocol-smoke/deep-states";
const deep = allChecks.filter((c) => c.id === DEEP);
const FAST = { maxEvents: 40, maxQueuedCommands: 16, drainIntervalMs: 2 };
/** The deep check's entry under a rule it judged (a failure names the one rule it broke; the others say "not judged"). */
const only = (report: Report) =>
  report.rules.flatMap((r) => r.checks).find((c) => c.id === DEEP && c.reasonKind !== "not-judged")!;

const CELLS_HERE = [
  ...ENDINGS.map((e) => `conn.ended-${e}`),
  "conn.ended-many",
  ...BURST_KIB.map((k) => `read.burst-${sizeName(k)}`),
  "id.across-methods",
  "id.across-connections",
];

/** Each mutant: the message its failure gives, and the step its counterexample ends with. */
const FOUND: [string, RegExp, string][] = [
  [
    "partial-line-buffer-leak",
    /^Connection \d+ of 64, after \d+ ended in turn \(the last \S+\): it was not served/,
    "endings",
  ],
  [
    "lines-per-read-capped",
    /^Of \d+ complete lines \(\d+ bytes\) written in one write, line \d+ was not answered/,
    "burst",
  ],
  [
    "query-cache-keyed-by-id",
    /^status with the id "same", used before for ping, got the reply of that ping/,
    "same-id",
  ],
  [
    "retry-cache-across-connections",
    /^observe with the id "same", used before for events, got the reply of that events/,
    "same-id",
  ],
];

describe("resource lifetimes and volumes", () => {
  it("are state cells the reference bridge reaches, at the smallest limits too", async () => {
    expect(CELLS.map((c) => c.id)).toEqual(expect.arrayContaining(CELLS_HERE));
    for (const limits of [FAST, { maxEvents: 1, maxQueuedCommands: 1, drainIntervalMs: 2 }]) {
      const report = await runSuite((token) => new ReferenceBridge({ token, ...limits }), { checks: deep, runs: 2 });
      expect(only(report).verdict, only(report).message).toBe("pass");
      const reached = report.stateCoverage!.cells.filter((c) => c.reached).map((c) => c.id);
      expect(reached).toEqual(expect.arrayContaining(CELLS_HERE));
    }
  });

  it("are drawn by generated sequences too, the 1 MiB write left to the seed sequence", () => {
    const steps = fc.sample(sessionStep({ aim: ["conn", "read", "id"] }), { numRuns: 2000, seed: 7 }) as Step[];
    for (const kind of ["endings", "burst", "same-id"]) expect(steps.some((s) => s.kind === kind)).toBe(true);
    const kibs = steps.flatMap((s) => (s.kind === "burst" ? s.kibs : []));
    expect(Math.max(...kibs)).toBe(64);
    for (const s of steps) if (s.kind === "same-id") expect(new Set(s.methods).size).toBeGreaterThan(1);
  });

  describe.each(FOUND)("%s", (name, message, step) => {
    const m = mutants.find((x) => x.name === name)!;
    it.each(["quick", "standard"] as const)(`fails on ${m.breaks} at %s, in its seed sequence`, async (profile) => {
      const report = await runSuite((token) => m.create({ token, ...FAST }), { checks: deep, timeoutMs: 400, profile });
      const found = only(report);
      expect(found.verdict, found.message).toBe("fail");
      expect(found.message).toMatch(message);
      expect(found.counterexample).toMatch(new RegExp(`${step}\\(\\{[^)]*\\}\\)\\]?$`));
      const rule = report.rules.find((r) => r.id.endsWith(`.${m.breaks}`))!;
      expect(rule.verdict).toBe("fail");
    });
  });
});
