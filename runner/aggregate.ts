// Check verdicts into rule verdicts: a rule's verdict is the worst of the checks that judged it.
import type { Contract, RuleId } from "../protocol/contract.js";
import { VERDICT_ORDER, type Verdict, worst } from "../protocol/verdict.js";
import type { CheckReport, RuleReport } from "../reports/types.js";
import type { Check, Finding } from "../suites/harness/check.js";

export interface CheckResult {
  check: Check;
  finding: Finding;
  report: CheckReport;
}

export const UNCOVERED = "no check for this rule in this version of the tool";

/** Why a rule that no check judged got no verdict of its own. */
export type SkipReason = (rule: RuleId) => string | undefined;

export function aggregate(
  contract: Contract,
  results: Iterable<CheckResult>,
  selected: (rule: RuleId) => boolean,
  skipReason: SkipReason,
): RuleReport[] {
  const all = [...results];
  return contract.rules.map((rule) => {
    const entries: CheckReport[] = [];
    for (const { check, finding, report } of all) {
      const implicated = finding.rules ?? check.rules;
      if (implicated.includes(rule.id)) {
        entries.push(report);
      } else if (check.rules.includes(rule.id)) {
        // The check stopped at a failure on another rule, so it did not judge this one.
        entries.push({
          id: report.id,
          verdict: "skip",
          message:
            finding.verdict === "fail"
              ? `not judged: the check stopped at a failure on ${implicated.join(", ")}`
              : `not judged by this check here (it judged ${implicated.join(", ")})`,
          durationMs: report.durationMs,
        });
      }
    }
    const base = {
      id: rule.fullId,
      title: rule.title,
      group: rule.group,
      level: rule.level,
      observed: rule.observed,
      requirement: rule.requirement,
    };
    // A rule left out by --rules/--skip stays out where a selected check merely passed through
    // it, but a failure found on it is still reported.
    const shown =
      selected(rule.id) || entries.some((e) => e.verdict === "fail" || e.verdict === "error" || e.verdict === "warn");
    if (entries.length && shown)
      return { ...base, verdict: entries.map((e) => e.verdict).reduce(worst), checks: entries };
    const reason = skipReason(rule.id);
    if (reason === UNCOVERED) return { ...base, verdict: "error" as const, reason, checks: [] };
    return { ...base, verdict: "skip" as const, reason: reason ?? "not run", checks: [] };
  });
}

export function summarize(rules: RuleReport[]): Record<Verdict, number> {
  return Object.fromEntries(VERDICT_ORDER.map((v) => [v, rules.filter((r) => r.verdict === v).length])) as Record<
    Verdict,
    number
  >;
}
