import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import { renderHtml } from "../reports/html.js";
import { renderJunit } from "../reports/junit.js";
import { renderMarkdown } from "../reports/markdown.js";
import type { CheckReport, Report } from "../reports/types.js";
import { applyBaseline, type Baseline, loadBaseline } from "../runner/baseline.js";
import { allChecks } from "../suites/index.js";
import { runSuite } from "./helpers.js";

// A failure is re-sent on a fresh bridge before it is reported: how often it comes back grades it.
const nonJson = allChecks.filter((c) => c.id === "error.parse/non-json");
const lenient = mutants.find((m) => m.name === "lenient-json")!;

/**
 * A bridge that reads NaN, comments and trailing commas leniently where `when` picks the line
 * (by its count among such lines, and by how many times the bridge was started before), and
 * rejects them otherwise.
 */
function sometimesLenient(when: (line: number, start: number) => boolean) {
  let malformed = 0;
  let starts = 0;
  return (token: string) => {
    const start = starts++;
    const strict = new ReferenceBridge({ token });
    const loose = lenient.create({ token });
    return new (class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        try {
          return (strict as unknown as { parse(l: Buffer): unknown }).parse(line);
        } catch (err) {
          // Only a line the lenient reading can take counts: where it takes it, the bridge misbehaves.
          const taken = (loose as unknown as { parse(l: Buffer): unknown }).parse(line);
          if (!when(malformed++, start)) throw err;
          return taken;
        }
      }
    })({ token });
  };
}

/** `bridge`, each of its replies sent `ms` later (in order: the delays are equal). */
function slowReplies(bridge: ReferenceBridge, ms: number): ReferenceBridge {
  const open = bridge as unknown as { send: (...args: unknown[]) => void };
  const send = open.send.bind(bridge);
  open.send = (...args) => void setTimeout(() => send(...args), ms);
  return bridge;
}

const finding = (report: Report): CheckReport =>
  report.rules.flatMap((r) => r.checks).find((c) => c.id === "error.parse/non-json")!;

/** A failure seen again on every one of its `tries`. */
const consistentOn = (tries: number) => ({
  verdict: "fail",
  reproduced: { tries, failed: tries, grade: "consistent" },
});

describe("--recheck", () => {
  it("grades a deterministic failure consistent, and it stays a failure", async () => {
    const report = await runSuite((token) => lenient.create({ token }), { checks: nonJson, recheck: 3 });
    expect(finding(report)).toMatchObject(consistentOn(3));
  });

  it("pays for one try of a fault that comes back alike where more tries would not fit their share of the budget", async () => {
    // A 100 ms budget leaves the tries after the first 5 ms, and each try waits at least 10 ms for a reply (a try
    // that cost nothing would be paid for): a fault seen again alike stays a failure, graded on one try.
    const report = await runSuite((token) => slowReplies(lenient.create({ token }), 10), {
      checks: nonJson,
      recheck: 3,
      timeBudgetMs: 100,
    });
    expect(finding(report)).toMatchObject(consistentOn(1));
  });

  it("counts a try's bridge start where a restart swaps in one started ahead: alike again, the fault is graded on one try", async () => {
    // The same bridge and budget as where every try is paid for, but each start takes 2 s beside the run: a try costs
    // more than a twentieth of the budget, so the tries after the first are not paid for.
    const report = await runSuite((token) => lenient.create({ token }), {
      checks: nonJson,
      recheck: 3,
      startMs: 2_000,
    });
    expect(finding(report)).toMatchObject(consistentOn(1));
  });

  it("tries every time a failure a baseline knows to be flaky, since the baseline reads its grade", async () => {
    const baseline: Baseline = {
      file: "baseline.yaml",
      entries: [{ id: "error.parse", kind: "rule", list: "flaky", reason: "it fails now and then" }],
    };
    const report = await runSuite((token) => lenient.create({ token }), {
      checks: nonJson,
      recheck: 3,
      timeBudgetMs: 100,
      baseline,
    });
    expect(finding(report)).toMatchObject(consistentOn(3));
  });

  it("grades a failure of every other bridge start flaky, still a failure, marked flaky in every reporter", async () => {
    // Each try runs on a fresh bridge. Start 0 serves preflight and is restarted, so the check meets
    // no leftover: it fails on start 1, and its tries on starts 2, 3 and 4 behave, misbehave and behave.
    const report = await runSuite(
      sometimesLenient((_, start) => start % 2 === 1),
      { checks: nonJson, recheck: 3 },
    );
    const check = finding(report);
    expect(check.verdict).toBe("fail");
    expect(check.reproduced?.grade).toBe("flaky");
    expect(check.reproduced).toEqual({ tries: 3, failed: 1, grade: "flaky" });
    for (const text of [renderMarkdown(report), renderHtml(report), renderJunit(report)]) {
      expect(text).toMatch(/flaky: failed again in 1 of 3 tries/);
    }
  });

  it("reports a failure seen once and never again as a warning", async () => {
    const report = await runSuite(
      sometimesLenient((n) => n === 0),
      { checks: nonJson, recheck: 3 },
    );
    const check = finding(report);
    expect(check).toMatchObject({ verdict: "warn", reproduced: { tries: 3, failed: 0, grade: "not-reproduced" } });
    expect(check.message).toMatch(/seen once, not reproduced in 3 tries/);
  });

  it("runs each try of a case that kills the game loop on a bridge started once for it", async () => {
    // The failing case leaves the bridge restarted; the tries that follow each start from a fresh
    // bridge, one start a try: the check's own restart after its failure serves the next try.
    const dies = mutants.find((m) => m.name === "drain-dies-on-ill-typed")!;
    const illActs: number[] = [];
    const report = await runSuite(
      (token) => {
        const start = illActs.push(0) - 1;
        const bridge = dies.create({ token }) as unknown as { act(params: Record<string, unknown>): unknown };
        const act = bridge.act.bind(bridge);
        bridge.act = (params) => {
          if ("x" in params && !Number.isSafeInteger(params.x)) illActs[start]!++;
          return act(params);
        };
        return bridge as unknown as ReferenceBridge;
      },
      // A budget whose share holds every try, however long each waits for the completion that never comes.
      { checks: allChecks.filter((c) => c.id === dies.check), recheck: 3, timeoutMs: 300, timeBudgetMs: 600_000 },
    );
    const check = report.rules.flatMap((r) => r.checks).find((c) => c.id === dies.check)!;
    expect(check).toMatchObject({ verdict: "fail", reproduced: { tries: 3, failed: 3, grade: "consistent" } });
    // Start 0 serves preflight; the check fails on start 1; the tries run on starts 2, 3 and 4; start 5 is left
    // for what comes next.
    expect(illActs).toEqual([0, 1, 1, 1, 1, 0]);
  });

  it("is off with 0", async () => {
    const report = await runSuite((token) => lenient.create({ token }), { checks: nonJson, recheck: 0 });
    expect(finding(report).reproduced).toBeUndefined();
  });
});

describe("a baseline", () => {
  const dir = mkdtempSync(join(tmpdir(), "aicc-baseline-"));
  const load = (text: string) => {
    const file = join(dir, `b${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, text);
    return loadBaseline(file, contract, allChecks);
  };
  const reportWith = (check: Partial<CheckReport>): Report =>
    ({
      rules: [
        {
          id: `${contract.prefix}.error.parse`,
          title: "",
          verdict: check.verdict ?? "fail",
          checks: [{ id: "error.parse/non-json", message: "", verdict: "fail", ...check }],
        },
      ],
    }) as unknown as Report;
  const flaky = { verdict: "fail" as const, reproduced: { tries: 3, failed: 1, grade: "flaky" as const } };
  const consistent = { verdict: "fail" as const, reproduced: { tries: 3, failed: 3, grade: "consistent" as const } };

  it("accepts a known-flaky check while it fails flakily, and reports it once it fails every time", () => {
    const b = load("known-flaky:\n  - check: error.parse/non-json\n    reason: the parser thread races\n");
    expect(applyBaseline(reportWith(flaky), b, contract.prefix)).toMatchObject({ unexpected: [], consistent: [] });
    const now = applyBaseline(reportWith(consistent), b, contract.prefix);
    expect(now.unexpected).toEqual([`${contract.prefix}.error.parse`]);
    expect(now.consistent.map((e) => e.id)).toEqual(["error.parse/non-json"]);
    // Passing now and then is what flaky means: not stale.
    expect(applyBaseline(reportWith({ verdict: "pass" }), b, contract.prefix).stale).toEqual([]);
  });

  it("counts an entry until its date, and after it the failure fails the run again", () => {
    const b = load("known-failures:\n  - rule: error.parse\n    reason: being rewritten\n    until: 2027-03-01\n");
    expect(applyBaseline(reportWith(consistent), b, contract.prefix, "2027-03-01").unexpected).toEqual([]);
    const late = applyBaseline(reportWith(consistent), b, contract.prefix, "2027-03-02");
    expect(late.unexpected).toEqual([`${contract.prefix}.error.parse`]);
    expect(late.expired.map((e) => e.until)).toEqual(["2027-03-01"]);
  });

  it("names a bad date or an unknown list", () => {
    expect(() => load("known-failures:\n  - rule: error.parse\n    reason: x\n    until: soon\n")).toThrow(
      /known-failures entry 1: until must be a date such as 2027-03-01/,
    );
    expect(() => load("known-flakey:\n  - rule: error.parse\n    reason: x\n")).toThrow(/"known-flakey" is neither/);
  });
});
