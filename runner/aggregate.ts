// Check verdicts into rule verdicts: a rule's verdict is the worst of the checks that judged it; a check
// that could not judge for a cause outside the rule (Finding.unjudged) leaves a note where others judged it.
import type { Contract, RuleId } from "../protocol/contract.js";
import { type ReasonKind, VERDICT_ORDER, type Verdict, worst } from "../protocol/verdict.js";
import type { CheckReport, RuleReport } from "../reports/types.js";
import { type Check, type Finding, requirementOf } from "../suites/harness/check.js";

export interface CheckResult {
  check: Check;
  finding: Finding;
  report: CheckReport;
}

/** How a check that judged another rule ended, said as it was: a warning is no failure. */
const ended = (verdict: string, rules: string): string =>
  verdict === "fail"
    ? `not judged: the check stopped at a failure on ${rules}`
    : verdict === "warn"
      ? `not judged: the check ended with a warning on ${rules}`
      : `not judged by this check here (it judged ${rules})`;

export const UNCOVERED = "no check for this rule in this version of the tool";

/** Why a rule that no check judged got no verdict of its own: the reason, and its kind. */
export type SkipReason = (rule: RuleId) => { kind: ReasonKind; text: string } | undefined;

export function aggregate(
  contract: Contract,
  results: Iterable<CheckResult>,
  selected: (rule: RuleId) => boolean,
  skipReason: SkipReason,
): RuleReport[] {
  const all = [...results];
  return contract.rules.map((rule) => {
    const base = {
      id: rule.fullId,
      title: rule.title,
      group: rule.group,
      level: rule.level,
      observed: rule.observed,
      requirement: rule.requirement,
    };
    const entries: CheckReport[] = [];
    const notes: string[] = [];
    // A rule left out by --rules / --skip gets no verdict, whatever a selected check ran into on it.
    for (const { check, finding, report } of selected(rule.id) ? all : []) {
      const implicated = finding.rules ?? check.rules;
      if (implicated.includes(rule.id)) {
        entries.push(report);
      } else if (check.rules.includes(rule.id)) {
        const outside = implicated.filter((id) => !selected(id));
        const found = finding.verdict !== "pass" && finding.verdict !== "skip";
        if (outside.length && found)
          notes.push(
            `${check.id} found a ${finding.verdict} on ${outside.join(", ")} (not selected): ${report.message}`,
          );
        // The check stopped at a failure on another rule, so it did not judge this one. Where
        // that rule is left out, nothing else fails the run for it: this rule is inconclusive.
        const blind =
          outside.length === implicated.length && (finding.verdict === "fail" || finding.verdict === "error");
        entries.push({
          id: report.id,
          verdict: blind ? "error" : "skip",
          reasonKind: blind ? "inconclusive" : "not-judged",
          message: blind
            ? `inconclusive: the check stopped at a ${finding.verdict} on ${implicated.join(", ")}, a rule not selected (see the note)`
            : ended(finding.verdict, implicated.join(", ")),
          durationMs: report.durationMs,
        });
      }
    }
    if (entries.length) {
      const { verdict, unjudged } = ruleVerdict(entries);
      notes.push(...unjudged);
      return { ...base, verdict, ...(notes.length ? { notes } : {}), checks: entries };
    }
    const said = notes.length ? { notes } : {};
    const { kind: reasonKind, text: reason } = skipReason(rule.id) ?? { kind: "not-run", text: "not run" };
    if (reasonKind === "uncovered") return { ...base, verdict: "error" as const, reason, reasonKind, checks: [] };
    return { ...base, verdict: "skip" as const, reason, reasonKind, ...said, checks: [] };
  });
}

/**
 * A rule's verdict from its checks' entries: the worst of them, except that an entry of a check that could
 * not judge (`unjudged`: an earlier root cause stopped it, or its deadline) counts only where no check
 * reached a verdict on the rule; elsewhere it is said in a note (returned in `unjudged`).
 */
export function ruleVerdict(entries: readonly CheckReport[]): { verdict: Verdict; unjudged: string[] } {
  const judged = entries.filter((e) => !e.unjudged);
  if (!judged.some((e) => e.verdict === "pass" || e.verdict === "fail" || e.verdict === "warn"))
    return { verdict: entries.map((e) => e.verdict).reduce(worst), unjudged: [] };
  const byCause = new Map<string, string[]>();
  for (const e of entries) {
    if (!e.unjudged) continue;
    const cause = e.unjudged.cause === "deadline" ? "cut short by the check's deadline" : inconclusiveAfter(e);
    byCause.set(cause, [...(byCause.get(cause) ?? []), e.id]);
  }
  return {
    verdict: judged.map((e) => e.verdict).reduce(worst),
    unjudged: [...byCause].map(([cause, ids]) => `not judged by ${ids.join(", ")} (${cause})`),
  };
}

const inconclusiveAfter = (e: CheckReport): string =>
  e.unjudged?.cause === "stopped" && e.unjudged.after
    ? `inconclusive after ${e.unjudged.after}, the root cause`
    : e.message;

export function summarize(rules: RuleReport[]): Record<Verdict, number> {
  return Object.fromEntries(VERDICT_ORDER.map((v) => [v, rules.filter((r) => r.verdict === v).length])) as Record<
    Verdict,
    number
  >;
}

/** A check's finding as the report shows it (before redaction); client mode's checks too. */
export function toCheckReport<C extends Pick<Check, "id" | "description" | "rules" | "note">>(
  check: C,
  f: Finding,
  durationMs: number,
  o: { contract: Contract; replayCommand?: (check: C, finding: Finding) => string },
): CheckReport {
  const report: CheckReport = {
    id: check.id,
    verdict: f.verdict,
    message: f.message,
    ...(f.reasonKind ? { reasonKind: f.reasonKind } : {}),
    description: check.description,
    requirement: requirementOf(check, o.contract),
    durationMs,
  };
  if (f.expected !== undefined) report.expected = f.expected;
  if (f.actual !== undefined) report.actual = f.actual;
  if (f.counterexample !== undefined) report.counterexample = f.counterexample;
  if (f.seed !== undefined) report.seed = f.seed;
  if (f.path !== undefined) report.path = f.path;
  if (f.oracle !== undefined) report.oracle = f.oracle;
  if (f.replayPath !== undefined) report.replayPath = f.replayPath;
  if (f.reproduced !== undefined) report.reproduced = f.reproduced;
  if (f.replayed !== undefined) report.replayed = f.replayed;
  if (f.interrupted) report.interrupted = true;
  if (f.unjudged !== undefined && f.verdict === "error") report.unjudged = f.unjudged;
  if ((f.verdict === "fail" || f.verdict === "warn") && o.replayCommand) report.replay = o.replayCommand(check, f);
  if (f.transcript && f.verdict !== "pass") report.transcript = f.transcript;
  return report;
}
