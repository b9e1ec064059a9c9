// What a user named on the command line, checked against what exists: check IDs given to
// --check (and to --rules by mistake), with the name they probably meant.
import picomatch from "picomatch";
import type { RuleId } from "../protocol/contract.js";
import type { Report } from "../reports/types.js";
import type { Check } from "../suites/harness/check.js";
import { allChecks } from "../suites/index.js";
import { suggest } from "./cli/options/suggest.js";
import { UsageError } from "./cli/options/value.js";
import { isDiagnosis } from "./health.js";

/** The checks named by --check, or a UsageError naming the first that does not exist. */
export function namedChecks(ids: readonly string[], checks: readonly Check[] = allChecks): Check[] {
  const unknown = ids.filter((id) => !checks.some((c) => c.id === id));
  if (unknown.length) {
    throw new UsageError(
      `no check named ${unknown.join(", ")}${suggest(
        unknown[0]!,
        checks.map((c) => c.id),
      )}; --list shows them all`,
    );
  }
  return checks.filter((c) => ids.includes(c.id));
}

/** For a --rules/--skip glob that matches no rule: where it names checks, say to use --check. */
export function checkHint(glob: string, checks: readonly Check[] = allChecks): string {
  if (!glob.includes("/")) return "";
  const test = picomatch(glob.replace(/^!/, ""), { dot: true });
  const matching = checks.filter((c) => test(c.id)).map((c) => c.id);
  if (matching.length)
    return `; ${glob} names ${matching.length === 1 ? "a check" : "checks"}: select ${matching.length === 1 ? "it" : "one"} with --check ${matching[0]}`;
  return `; a check ID goes to --check${suggest(
    glob,
    checks.map((c) => c.id),
  )}`;
}

/** What --list shows: with --check, only those checks and the selected rules they cover. */
export function listSelection(
  ids: readonly string[] | undefined,
  selected: (rule: RuleId) => boolean,
): { checks: readonly Check[]; rules: (rule: RuleId) => boolean } {
  if (!ids?.length) return { checks: allChecks, rules: selected };
  const checks = namedChecks(ids);
  return { checks, rules: (rule) => selected(rule) && checks.some((c) => c.rules.includes(rule)) };
}

/**
 * What --last-failed runs again: the checks that failed or could not be judged in `report`, and every check of a rule
 * that failed or could not be judged without one of them (found by preflight or the canary); a check that passed is
 * not run again. `rules` adds to the report's failing rules the rules of every check chosen: a check's failure may be
 * judged on a rule not its own (a precise id echoed as Infinity breaks wire.ndjson, not the id's echo). `unreplayable`
 * names each failing entry no check of this tool can run again, and why.
 */
export function lastFailedSelection(
  report: Report,
  checks: readonly Check[] = allChecks,
): { rules: string[]; checks: string[]; unreplayable: string[] } {
  const failing = (verdict: string) => verdict === "fail" || verdict === "error";
  const rules = new Set(report.rules.filter((r) => failing(r.verdict)).map((r) => r.id));
  const chosen = new Set<string>();
  const unreplayable = new Set<string>();
  for (const entry of report.rules.flatMap((r) => r.checks)) {
    if (!failing(entry.verdict)) continue;
    const check = checks.find((c) => c.id === entry.id);
    if (check) {
      chosen.add(check.id);
      for (const rule of check.rules) rules.add(rule);
    } else if (entry.verdict === "error") continue;
    else if (isDiagnosis(entry.id))
      unreplayable.add(
        `${entry.id}: found between checks (by preflight or the canary), not a check with a case of its own; its rule is judged again by its checks`,
      );
    else unreplayable.add(`${entry.id}: no check of that name in this version of the tool`);
  }
  const ofRule = (id: string) => checks.filter((c) => c.rules.some((r) => id === r || id.endsWith(`.${r}`)));
  for (const rule of report.rules.filter((r) => failing(r.verdict)))
    if (!rule.checks.some((c) => chosen.has(c.id))) for (const check of ofRule(rule.id)) chosen.add(check.id);
  return { rules: [...rules], checks: [...chosen], unreplayable: [...unreplayable] };
}
