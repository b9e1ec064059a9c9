// --export DIR: one standalone reproducer per failing check, a dependency-free Python 3 script
// that re-sends the recorded minimal case byte for byte and judges the reply by the check's
// machine oracle. The script is runner/reproducer.py (the replay and the judgement, the same for
// every check) with the check's plan (data: the steps, the oracle) put in place of its marker.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { kindOf } from "../protocol/oracles.js";
import { makeDirectory } from "../reports/output.js";
import type { CheckReport, Report } from "../reports/types.js";
import { allChecks } from "../suites/index.js";
import { UsageError } from "./cli/options/value.js";
import { isDiagnosis } from "./health.js";

/** A failing check whose case cannot be re-sent from the report, and why: no script is written for it. */
export interface Refused {
  check: string;
  reason: string;
}

/**
 * Writes DIR/<check>.py for every failing check of the report whose case the report holds whole;
 * returns the files written and the checks refused, each with the reason.
 */
export function exportReproducers(
  dir: string,
  report: Report,
  o: ExportOptions,
): { written: string[]; refused: Refused[] } {
  const failing = new Map<string, { check: CheckReport; rules: string[] }>();
  for (const rule of report.rules) {
    for (const check of rule.checks) {
      // A diagnosis (what stopped, found by the canary) is no case of its own: the check after which
      // it was found has the reproducer.
      if (check.verdict !== "fail" || isDiagnosis(check.id)) continue;
      const seen = failing.get(check.id);
      if (seen) seen.rules.push(rule.id);
      else failing.set(check.id, { check, rules: [rule.id] });
    }
  }
  const written: string[] = [];
  const refused: Refused[] = [];
  const scripts = [...failing.values()].flatMap(({ check: failed, rules }) => {
    const replayOnly = allChecks.find((c) => c.id === failed.id)?.replayOnly;
    if (replayOnly) {
      const exact = failed.path === undefined ? "" : ` --seed ${failed.seed} --path ${failed.path}`;
      const commands = failed.replayPath === undefined ? "" : ` --replay-path '${failed.replayPath}'`;
      const replay = failed.replay ?? `--check ${failed.id}${exact}${commands}`;
      refused.push({ check: failed.id, reason: `${replayOnly}; its replay command reproduces it: ${replay}` });
      return [];
    }
    let check = failed;
    let plan = planOf(check, o);
    // A queue's ledger can start over from where it opened when the report left out what came between.
    const restarted = check.oracle && kindOf(check.oracle).restarted?.(check.oracle);
    if (plan.unreproducible !== undefined && restarted) {
      const again = planOf({ ...check, oracle: restarted }, o);
      if (again.unreproducible === undefined) [check, plan] = [{ ...check, oracle: restarted }, again];
    }
    if (plan.unreproducible === undefined) return [{ check, rules, plan }];
    refused.push({ check: check.id, reason: plan.unreproducible });
    return [];
  });
  try {
    if (scripts.length) makeDirectory(dir);
    for (const { check, rules, plan } of scripts) {
      const file = join(dir, reproducerName(check.id));
      writeFileSync(file, scriptOf(check, plan, rules, report, o), { mode: 0o755 });
      written.push(file);
    }
  } catch (err) {
    throw new UsageError(`--export: cannot write to ${dir}: ${(err as Error).message}`);
  }
  return { written, refused };
}

import { type ExportOptions, planOf } from "./export/plan.js";
import { reproducerName, scriptOf } from "./export/script.js";

export { type ExportOptions, type Plan, planOf } from "./export/plan.js";
export { noOracleReason, pyString, pyValue, reproducerName, scriptOf } from "./export/script.js";
