import { describe, expect, it } from "vitest";
import { contract } from "../protocol/contract.js";
import type { Report, RuleReport } from "../reports/types.js";
import { aggregate, toCheckReport } from "../runner/aggregate.js";
import { mergeReports } from "../runner/merge.js";
import type { Check, Finding } from "../suites/harness/check.js";

describe("a check that judged another rule", () => {
  const check: Check = {
    id: "wire.ndjson/x",
    rules: ["wire.ndjson", "wire.tcp-stream"],
    description: "d",
    run: async () => ({ verdict: "pass", message: "" }),
  };
  const labelled = (finding: Finding) =>
    aggregate(
      contract,
      [{ check, finding, report: { id: check.id, verdict: finding.verdict, message: finding.message } }],
      () => true,
      () => undefined,
    ).find((r) => r.id.endsWith("wire.tcp-stream"))!.checks[0]!.message;

  it("says it stopped at a failure only after one, and that a warning was a warning", () => {
    expect(labelled({ verdict: "fail", message: "m", rules: ["wire.ndjson"] })).toMatch(
      /stopped at a failure on .*wire.ndjson/,
    );
    expect(labelled({ verdict: "warn", message: "m", rules: ["wire.ndjson"] })).toMatch(
      /ended with a warning on .*wire.ndjson/,
    );
    expect(labelled({ verdict: "warn", message: "m", rules: ["wire.ndjson"] })).not.toMatch(/failure/);
  });
});

describe("a check that could not judge for a cause outside its rules", () => {
  const check = (id: string, rules: Check["rules"]): Check => ({
    id,
    rules,
    description: "d",
    run: async () => ({ verdict: "pass", message: "" }),
  });
  const result = (c: Check, finding: Finding) => ({
    check: c,
    finding,
    report: toCheckReport(c, finding, 0, { contract }),
  });
  const ping = check("method.ping/ok", ["method.ping"]);
  const deep = check("validation.protocol-smoke/deep-states", ["method.ping", "validation.protocol-smoke"]);
  const stopped: Finding = {
    verdict: "error",
    message: "inconclusive: the bridge stopped completing commands after command.x/typed",
    unjudged: { cause: "stopped", after: "command.x/typed" },
  };
  const rules = (results: ReturnType<typeof result>[]) =>
    aggregate(
      contract,
      results,
      () => true,
      () => undefined,
    );
  const rule = (all: RuleReport[], id: string) => all.find((r) => r.id === `${contract.prefix}.${id}`)!;

  it("leaves a note on a rule another check judged, and keeps that check's verdict", () => {
    const all = rules([result(ping, { verdict: "pass", message: "ok" }), result(deep, stopped)]);
    expect(rule(all, "method.ping").verdict).toBe("pass");
    expect(rule(all, "method.ping").notes).toEqual([
      "not judged by validation.protocol-smoke/deep-states (inconclusive after command.x/typed, the root cause)",
    ]);
    // The entry says what the check reached: no verdict, and why.
    expect(rule(all, "method.ping").checks.find((c) => c.id === deep.id)).toMatchObject({
      verdict: "error",
      unjudged: { cause: "stopped", after: "command.x/typed" },
    });
    // A rule it alone covers is still `error`, naming the cause.
    expect(rule(all, "validation.protocol-smoke").verdict).toBe("error");
    expect(rule(all, "validation.protocol-smoke").checks[0]!.message).toMatch(/after command.x\/typed/);
  });

  it("never hides a failure another check found, and a deadline is said as one", () => {
    const cut: Finding = { verdict: "error", message: "no case finished", unjudged: { cause: "deadline" } };
    const failed = rules([
      result(ping, { verdict: "fail", message: "no", expected: "e", actual: "a" }),
      result(deep, cut),
    ]);
    expect(rule(failed, "method.ping").verdict).toBe("fail");
    expect(rule(failed, "method.ping").notes).toEqual([
      "not judged by validation.protocol-smoke/deep-states (cut short by the check's deadline)",
    ]);
  });

  it("turns a rule `error` where no check judged it: a skip or an error without such a cause is no verdict", () => {
    const skipped = rules([result(ping, { verdict: "skip", message: "not here" }), result(deep, stopped)]);
    expect(rule(skipped, "method.ping").verdict).toBe("error");
    const fault = rules([result(ping, { verdict: "error", message: "harness fault: x" }), result(deep, stopped)]);
    expect(rule(fault, "method.ping").verdict).toBe("error");
    // Without the typed cause, an error is an error, whatever its message says.
    const plain = rules([
      result(ping, { verdict: "pass", message: "ok" }),
      result(deep, { verdict: "error", message: stopped.message }),
    ]);
    expect(rule(plain, "method.ping").verdict).toBe("error");
  });

  it("is judged alike when shards are merged: the check that judged the rule ran in another shard", () => {
    const report = (results: ReturnType<typeof result>[]): Report =>
      ({
        schemaVersion: 1,
        tool: { name: "t", version: "0" },
        contract: { version: 1, sha256: "x", rules: contract.rules.length },
        target: { kind: "bridge", spawned: true },
        seed: 1,
        startedAt: new Date(0).toISOString(),
        durationMs: 0,
        summary: { pass: 0, fail: 0, warn: 0, skip: 0, error: 0 },
        rules: rules(results),
      }) as Report;
    const a = report([result(deep, stopped)]);
    const b = report([result(ping, { verdict: "pass", message: "ok" })]);
    expect(rule(a.rules, "method.ping").verdict).toBe("error");
    const merged = mergeReports([a, b]);
    expect(rule(merged.rules, "method.ping")).toMatchObject({
      verdict: "pass",
      notes: [
        "not judged by validation.protocol-smoke/deep-states (inconclusive after command.x/typed, the root cause)",
      ],
    });
    expect(rule(merged.rules, "validation.protocol-smoke").verdict).toBe("error");
  });
});
