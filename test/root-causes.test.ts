import { describe, expect, it } from "vitest";
import { contract } from "../protocol/contract.js";
import { rootCauseLine } from "../reports/root-causes.js";
import type { Report, RuleReport } from "../reports/types.js";
import type { CheckResult } from "../runner/aggregate.js";
import { rootCauses } from "../runner/root-causes.js";
import type { Check, Finding } from "../suites/harness/check.js";

const full = (id: string) => contract.rule(id).fullId;
const result = (id: string, rules: string[], finding: Finding): CheckResult =>
  ({ check: { id, rules }, finding, report: { id, verdict: finding.verdict, message: "" } }) as unknown as CheckResult;
const rule = (id: string, verdict: RuleReport["verdict"]) => ({ id: full(id), verdict }) as RuleReport;
const failed = (rules?: string[], rootCause?: Finding["rootCause"]): Finding => ({
  verdict: "fail",
  message: "",
  ...(rules ? { rules: rules as Check["rules"][number][] } : {}),
  ...(rootCause ? { rootCause } : {}),
});

describe("root causes per run", () => {
  const completion = "integration.command-completion";
  const results = [
    result("method.act/accept-and-complete", ["method.act", completion], failed([completion])),
    // Not judged on its field: a plain command of the type never completed.
    result(
      "command.x/typed",
      ["command.x", completion],
      failed([completion], { rule: completion, plain: { type: "!" } }),
    ),
    result("error.queue-full/flood", ["error.queue-full"], failed([completion], { rule: completion, plain: {} })),
    // One finding that failed two rules: one cause, two rules.
    result("error.parse/non-json", ["error.parse", "wire.utf8"], failed()),
    result("method.ping/ok", ["method.ping"], { verdict: "pass", message: "" }),
    // Could not judge its session: the plain form of a command it acted with fails, as another check found.
    result("validation.protocol-smoke/deep-states", ["validation.protocol-smoke", completion], {
      verdict: "error",
      message: "",
      reasonKind: "inconclusive",
      unjudged: { cause: "stopped" },
      rootCause: { rule: completion, plain: { type: "t" } },
    }),
  ];
  const rules = [
    rule(completion, "fail"),
    rule("command.x", "skip"),
    rule("error.queue-full", "skip"),
    rule("error.parse", "fail"),
    rule("wire.utf8", "fail"),
    rule("method.ping", "pass"),
  ];

  it("counts the rules each cause failed, and the checks that pointed at a plain form's rule, judged or not", () => {
    expect(rootCauses(contract, results, rules).rootCauses).toEqual([
      {
        rule: full(completion),
        failed: [full(completion)],
        pointedBy: ["command.x/typed", "error.queue-full/flood", "validation.protocol-smoke/deep-states"],
      },
      { rule: full("error.parse"), failed: [full("error.parse"), full("wire.utf8")] },
    ]);
  });

  it("says so in one console line, and nothing where nothing failed", () => {
    const report = { rootCauses: rootCauses(contract, results, rules).rootCauses } as Report;
    expect(rootCauseLine(report)).toBe(
      "root causes: 2; integration.command-completion failed 1 rule (3 checks of other rules pointed at it); " +
        "error.parse failed 2 rules: error.parse, wire.utf8",
    );
    expect(rootCauses(contract, results.slice(-2), rules)).toEqual({});
    expect(rootCauseLine({} as Report)).toBeUndefined();
  });
});
