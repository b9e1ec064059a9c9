import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { flaky } from "../bridges/mutants/flaky.js";
import { mutants } from "../bridges/mutants/index.js";
import { type JsonObject, ReferenceBridge } from "../bridges/reference/bridge.js";
import type { Report } from "../reports/types.js";
import { compareReports } from "../runner/compare.js";
import { recordedCase, recordedTarget, triesToTrust } from "../runner/replay.js";
import type { Check, Finding } from "../suites/harness/check.js";
import { allChecks } from "../suites/index.js";
import { cli, readReport, runSuite, TEST_TOKEN } from "./helpers.js";

/** A deterministic stand-in for Math.random: the same draws in every run of the test. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const pass: Finding = { verdict: "pass", message: "ok" };
const fail = (n: number): Finding => ({ verdict: "fail", message: `broke on ${n}`, actual: String(n) });

/** A property over integers that fails where `broken(n)`, remembering every input it judged. */
function integerCheck(broken: (n: number) => boolean, seen: number[] = []): Check {
  return {
    id: "wire.ndjson/integers",
    rules: ["wire.ndjson"],
    description: "judges generated integers",
    run: (ctx) =>
      ctx.property(fc.integer({ min: 0, max: 1_000_000 }), async (n) => {
        seen.push(n);
        return broken(n) ? fail(n) : pass;
      }),
  };
}

const finding = (report: Report, id: string) => report.rules.flatMap((r) => r.checks).find((c) => c.id === id)!;

describe("an exact case", () => {
  it("runs that one case once: no later cases and no shrinking, whether it passes or fails", async () => {
    const found = await runSuite(undefined, { checks: [integerCheck((n) => n > 500_000)], seed: 9, runs: 50 });
    const failed = finding(found, "wire.ndjson/integers");
    expect(failed.verdict).toBe("fail");
    const seen: number[] = [];
    const check = integerCheck((n) => n > 500_000, seen);
    const exact = { seed: failed.seed!, path: failed.path!, runs: 50 };
    const replay = await runSuite(undefined, { checks: [check], runs: 50, cases: new Map([[check.id, exact]]) });
    expect(seen).toHaveLength(1);
    expect(finding(replay, check.id)).toMatchObject({ verdict: "fail", counterexample: String(seen[0]) });
    // The same case on a bridge where it passes: still only that case, named as it ran.
    const after: number[] = [];
    const fixed = integerCheck(() => false, after);
    const now = await runSuite(undefined, { checks: [fixed], runs: 50, cases: new Map([[fixed.id, exact]]) });
    expect(after).toEqual(seen);
    expect(finding(now, fixed.id)).toMatchObject({ verdict: "pass", counterexample: String(seen[0]) });
  });

  it("names a warning's own case, so that a replay judges it and not another", async () => {
    const warns: Check = {
      id: "wire.ndjson/warns",
      rules: ["wire.ndjson"],
      description: "warns on odd integers",
      run: (ctx) =>
        ctx.property(fc.integer({ min: 0, max: 1000 }), async (n) =>
          n % 2 ? { verdict: "warn", message: `odd ${n}` } : pass,
        ),
    };
    const report = await runSuite(undefined, { checks: [warns], seed: 3, runs: 30 });
    const warned = finding(report, warns.id);
    expect(warned.verdict).toBe("warn");
    const odd = Number(warned.counterexample);
    const replay = await runSuite(undefined, {
      checks: [warns],
      runs: 30,
      cases: new Map([[warns.id, { seed: warned.seed!, path: warned.path! }]]),
    });
    expect(finding(replay, warns.id)).toMatchObject({ verdict: "warn", message: `odd ${odd}` });
  });
});

describe("a fault on some connections", () => {
  const lenient = mutants.find((m) => m.name === "lenient-json")!;
  const nonJson = allChecks.filter((c) => c.id === lenient.check);

  it("is graded flaky by the recheck, each try one exact case on a fresh bridge", async () => {
    const random = seeded(7);
    const half = flaky(lenient, 0.5, random);
    const report = await runSuite((token) => half.create({ token }), { checks: nonJson, recheck: 10, timeoutMs: 400 });
    const check = finding(report, lenient.check);
    expect(check.verdict).toBe("fail");
    expect(check.reproduced?.grade).toBe("flaky");
    expect(check.reproduced!.failed).toBeGreaterThan(0);
    expect(check.reproduced!.failed).toBeLessThan(check.reproduced!.tries);
  });

  it("sometimes passes an exact replay, and a fault on every connection never does", async () => {
    const random = seeded(11);
    const everyConnection = await runSuite((token) => lenient.create({ token }), { checks: nonJson, timeoutMs: 400 });
    const failed = finding(everyConnection, lenient.check);
    const exact = new Map([[lenient.check, { seed: failed.seed!, path: failed.path! }]]);
    const verdicts = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const half = flaky(lenient, 0.5, random);
      const replay = await runSuite((token) => half.create({ token }), {
        checks: nonJson,
        cases: exact,
        timeoutMs: 400,
      });
      verdicts.add(finding(replay, lenient.check).verdict);
    }
    expect([...verdicts].sort()).toEqual(["fail", "pass"]);
    for (let i = 0; i < 3; i++) {
      const replay = await runSuite((token) => lenient.create({ token }), {
        checks: nonJson,
        cases: exact,
        timeoutMs: 400,
      });
      expect(finding(replay, lenient.check).verdict).toBe("fail");
    }
  });
});

describe("a replay of a rechecked case", () => {
  const lenient = mutants.find((m) => m.name === "lenient-json")!;
  const nonJson = allChecks.filter((c) => c.id === lenient.check);

  it("asks as many passes in a row as make a chance fix unlikely, the fault taken as rare as the record allows", () => {
    // Four failures in four tries still come from a fault on half the runs one time in sixteen: 0.47^5 < 0.05.
    expect(triesToTrust(4, 4)).toBe(5);
    expect(triesToTrust(3, 4)).toBe(11);
    expect(triesToTrust(2, 4)).toBe(20);
    expect(triesToTrust(0, 4)).toBe(20);
    // The longer the record of failing every time, the fewer passes a fix needs.
    expect(triesToTrust(11, 11)).toBeLessThan(triesToTrust(4, 4));
  });

  it("asks more than one pass of a case that failed every time it was rechecked", async () => {
    const report = await runSuite((token) => lenient.create({ token }), {
      checks: nonJson,
      recheck: 3,
      timeoutMs: 400,
    });
    const recorded = finding(report, lenient.check);
    expect(recorded.reproduced).toMatchObject({ tries: 3, failed: 3, grade: "consistent" });
    expect(recordedCase(report, recorded).tries).toBe(5);
  });

  it("is FIXED only after passing every try, and fails at the first try that fails", async () => {
    const random = seeded(7);
    const report = await runSuite((token) => flaky(lenient, 0.5, random).create({ token }), {
      checks: nonJson,
      recheck: 10,
      timeoutMs: 400,
    });
    const recorded = finding(report, lenient.check);
    expect(recorded.reproduced?.grade).toBe("flaky");
    const exact = recordedCase(report, recorded);
    expect(exact.tries).toBeGreaterThan(1);
    // On the mutant: every try on a fresh bridge, so a fault on half the connections shows before the tries run out.
    let starts = 0;
    const later = seeded(3);
    const again = await runSuite(
      (token) => {
        starts++;
        return flaky(lenient, 0.5, later).create({ token });
      },
      { checks: nonJson, cases: new Map([[lenient.check, exact]]), timeoutMs: 400 },
    );
    const replayed = finding(again, lenient.check);
    expect(replayed.verdict).toBe("fail");
    expect(replayed.message).toMatch(/\(try \d+ of \d+: a fault that struck as often as the recheck saw it/);
    expect(starts).toBeGreaterThan(1);
    // On the reference bridge: every try passes, and the finding says how many.
    const fixed = await runSuite(undefined, {
      checks: nonJson,
      cases: new Map([[lenient.check, exact]]),
      timeoutMs: 400,
    });
    expect(finding(fixed, lenient.check)).toMatchObject({ verdict: "pass", replayed: { tries: exact.tries } });
    expect(finding(fixed, lenient.check).message).toContain(`It passed ${exact.tries} tries in a row`);
  });
});

describe("recorded cases run first", () => {
  /** A fault only one generated value shows: a fresh seed all but never finds it again. */
  const needle = async () => {
    const seen: number[] = [];
    await runSuite(undefined, { checks: [integerCheck(() => false, seen)], seed: 21, runs: 20 });
    const target = seen[13]!;
    const report = await runSuite(undefined, { checks: [integerCheck((n) => n === target)], seed: 21, runs: 20 });
    return { target, report };
  };

  it("--last-failed keeps a failure found by one generated case, over fresh seeds", async () => {
    const { target, report } = await needle();
    const failed = finding(report, "wire.ndjson/integers");
    expect(failed).toMatchObject({ verdict: "fail", counterexample: String(target) });
    const cases = new Map([["wire.ndjson/integers", { seed: failed.seed!, path: failed.path!, runs: 20 }]]);
    for (const fresh of [1, 2, 3, 4, 5]) {
      const lines: string[] = [];
      const again = await runSuite(undefined, {
        checks: [integerCheck((n) => n === target)],
        seed: 21,
        runs: 20,
        cases,
        caseMode: "last-failed",
        freshSeed: fresh,
        log: (l) => lines.push(l),
      });
      expect(finding(again, "wire.ndjson/integers").verdict).toBe("fail");
      expect(lines.join("\n")).toContain("last failed: STILL FAILING wire.ndjson/integers");
    }
  });

  it("the corpus says FIXED only when the saved case and new cases pass", async () => {
    const { target, report } = await needle();
    const failed = finding(report, "wire.ndjson/integers");
    const cases = new Map([["wire.ndjson/integers", { seed: failed.seed!, path: failed.path!, runs: 20 }]]);
    const corpus = async (broken: (n: number) => boolean) => {
      const lines: string[] = [];
      const r = await runSuite(undefined, {
        checks: [integerCheck(broken)],
        seed: 5,
        runs: 20,
        cases,
        caseMode: "corpus",
        log: (l) => lines.push(l),
      });
      return { verdict: finding(r, "wire.ndjson/integers").verdict, said: lines.join("\n") };
    };
    const still = await corpus((n) => n === target);
    expect(still).toMatchObject({ verdict: "fail", said: expect.stringContaining("corpus: STILL FAILING") });
    // The saved case passes, but the check's own cases find another fault: not FIXED.
    const other = await corpus((n) => n !== target && n % 2 === 1);
    expect(other.verdict).toBe("fail");
    expect(other.said).toContain("the recorded case passes now, but a new case fails");
    expect(other.said).not.toContain("FIXED");
    const fixed = await corpus(() => false);
    expect(fixed).toMatchObject({ verdict: "pass", said: expect.stringContaining("corpus: FIXED") });
  });

  it("--compare calls fail -> pass IMPROVED only when the old failing case was replayed and passed", async () => {
    const { target, report: before } = await needle();
    const failed = finding(before, "wire.ndjson/integers");
    const cases = new Map([["wire.ndjson/integers", { seed: failed.seed!, path: failed.path!, runs: 20 }]]);
    const fresh = await runSuite(undefined, { checks: [integerCheck((n) => n === target)], seed: 77, runs: 20 });
    expect(finding(fresh, "wire.ndjson/integers").verdict).toBe("pass");
    const changed = compareReports(before, fresh).find((c) => c.id.endsWith("wire.ndjson"))!;
    expect(changed).toMatchObject({ from: "fail", to: "pass", sameCases: false });
    const proven = await runSuite(undefined, {
      checks: [integerCheck(() => false)],
      seed: 21,
      runs: 20,
      cases,
      caseMode: "last-failed",
      freshSeed: 77,
    });
    const improved = compareReports(before, proven).find((c) => c.id.endsWith("wire.ndjson"))!;
    expect(improved).toMatchObject({ from: "fail", to: "pass", sameCases: true });
  });
});

describe("the target a report recorded", () => {
  it("is the spawn command, the endpoint, or the built-in bridge", () => {
    const target = (t: Partial<Report["target"]>) => ({ target: { kind: "bridge", spawned: false, ...t } }) as Report;
    expect(recordedTarget(target({ spawned: true, command: "python3 b.py", endpoint: "127.0.0.1:5" }))).toEqual({
      spawn: "python3 b.py",
    });
    expect(recordedTarget(target({ endpoint: "127.0.0.1:5" }))).toEqual({ endpoint: "127.0.0.1:5" });
    expect(recordedTarget(target({ spawned: true, label: "built-in reference bridge on 127.0.0.1:5" }))).toEqual({
      builtIn: true,
    });
    expect(recordedTarget(target({ kind: "client", command: "c" }))).toBeUndefined();
  });
});

/**
 * Reads the id into a double and writes it back as Python's json does: 1e400 comes back as Infinity, no JSON. Its
 * failure is judged on wire.ndjson, a rule precise-id (the check that finds it) does not judge.
 */
class EchoesInfinity extends ReferenceBridge {
  protected override idText(): string | undefined {
    return undefined;
  }
  protected override line(response: JsonObject, idText?: string): string {
    const text = super.line(response, idText);
    const id = response.id as unknown;
    return typeof id === "number" && !Number.isFinite(id)
      ? text.replace('"id":null', `"id":${id < 0 ? "-" : ""}Infinity`)
      : text;
  }
}

describe("--last-failed", () => {
  it("replays a check whose failure was judged on another rule, and names the entries it cannot replay", async () => {
    const bridge = new EchoesInfinity({ token: TEST_TOKEN });
    const { port } = await bridge.listen();
    const dir = mkdtempSync(join(tmpdir(), "aicc-last-failed-"));
    try {
      const at = ["--endpoint", `127.0.0.1:${port}`, "--profile", "quick", "--timeout", "400ms"];
      const env = { FONLINE_AI_TOKEN: TEST_TOKEN };
      const earlier = join(dir, "earlier.json");
      await cli([...at, "--check", "wire.response-envelope/precise-id", "--recheck", "0", "--json", earlier], env);
      const before = readReport(earlier);
      const ndjson = before.rules.find((r) => r.id.endsWith(".wire.ndjson"))!;
      expect(ndjson.verdict).toBe("fail");
      expect(ndjson.checks.map((c) => c.id)).toEqual(["wire.response-envelope/precise-id"]);
      // A diagnosis that failed is no check to replay: said so, not left out silently.
      ndjson.checks.push({ id: "canary/wire.ndjson", verdict: "fail", message: "m" });
      writeFileSync(earlier, JSON.stringify(before));
      const json = join(dir, "again.json");
      const r = await cli([...at, "--last-failed", earlier, "--json", json], env);
      expect(r.code).toBe(1);
      const precise = finding(readReport(json), "wire.response-envelope/precise-id");
      expect(precise).toMatchObject({ verdict: "fail", replayed: { verdict: "fail" } });
      expect(r.err).toMatch(/--last-failed cannot replay canary\/wire.ndjson: found between checks/);
    } finally {
      await bridge.close();
    }
  });
});
