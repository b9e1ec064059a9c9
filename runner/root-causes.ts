// The run's failures by root cause: a failing check's cause is the rule whose plain form broke where it points
// at one (Finding.rootCause), else the first rule it blamed; a cause failed every failing rule its checks blamed.
// A check left unjudged by a plain form's failure (an error with a rootCause) is counted among those pointing at it.
import type { Contract } from "../protocol/contract.js";
import type { RootCauseTally, RuleReport } from "../reports/types.js";
import type { CheckResult } from "./aggregate.js";

/** The report's rootCauses section: absent where nothing failed. */
export function rootCauses(
  contract: Contract,
  results: Iterable<CheckResult>,
  rules: RuleReport[],
): { rootCauses?: RootCauseTally[] } {
  const failing = new Set(rules.filter((r) => r.verdict === "fail").map((r) => r.id));
  const full = (id: string) => (contract.has(id) ? contract.rule(id).fullId : id);
  const causes = new Map<string, { failed: Set<string>; pointedBy: string[] }>();
  const unjudged: CheckResult[] = [];
  for (const result of results) {
    const { check, finding } = result;
    if (finding.verdict === "error" && finding.rootCause) unjudged.push(result);
    if (finding.verdict !== "fail") continue;
    const blamed = (finding.rules ?? check.rules).map(full).filter((id) => failing.has(id));
    if (!blamed.length) continue;
    const rule = finding.rootCause ? full(finding.rootCause.rule) : blamed[0]!;
    const cause = causes.get(rule) ?? { failed: new Set([rule].filter((id) => failing.has(id))), pointedBy: [] };
    causes.set(rule, cause);
    for (const id of blamed) cause.failed.add(id);
    if (finding.rootCause) cause.pointedBy.push(check.id);
  }
  // A check that could not judge because of a plain form another check found broken points at that cause too.
  for (const { check, finding } of unjudged) causes.get(full(finding.rootCause!.rule))?.pointedBy.push(check.id);
  if (!causes.size) return {};
  return {
    rootCauses: [...causes].map(([rule, { failed, pointedBy }]) => ({
      rule,
      failed: [...failed],
      ...(pointedBy.length ? { pointedBy } : {}),
    })),
  };
}
