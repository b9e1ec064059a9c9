// --last-failed and --replay take up an earlier report's failures: which rules run again, and what cannot.
import type { Report } from "../../../reports/types.js";
import { lastFailedSelection } from "../../selection.js";
import type { Io } from "../outcome.js";

/** --last-failed: the rules that failed or could not be judged in an earlier report (all when none did). */
export function lastFailedRules(report: Report, file: string, io: Io): string[] {
  const { rules, unreplayable } = lastFailedSelection(report);
  for (const why of unreplayable) io.err(`aicontrol-conformance: --last-failed cannot replay ${why}\n`);
  if (rules.length === 0) io.err(`aicontrol-conformance: no rule failed in ${file}: running every rule\n`);
  return rules;
}
