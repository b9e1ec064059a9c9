// Time-boxed fuzzing after the fixed pass (--duration): the checks again with fresh seeds, aimed
// first at the state cells no check reached yet.
import { VERDICT_ORDER } from "../protocol/verdict.js";
import type { Check } from "../suites/harness/check.js";
import { redactor } from "../suites/harness/redact.js";
import { type CheckResult, toCheckReport } from "./aggregate.js";
import { runCheck } from "./attempt.js";
import type { RunCoverage } from "./coverage.js";
import type { RunOptions } from "./run.js";

/**
 * Time-boxed fuzzing after the fixed pass: checks again with fresh seeds until the deadline, first aimed at the
 * state cells not reached yet (see RunCoverage.round), then every check; the worst finding stays.
 */
export async function fuzzUntil(
  end: number,
  all: Check[],
  results: Map<string, CheckResult>,
  o: RunOptions,
  log: (line: string) => void,
  coverage: RunCoverage,
): Promise<{ rounds: number; checks: number }> {
  coverage.endFixedPass();
  const redact = redactor(o.token);
  let round = 0;
  let ran = 0;
  let lastLog = Date.now();
  const failingNow = () => [...results.values()].filter((r) => r.finding.verdict === "fail").length;
  let lastFailing = failingNow();
  // A round needs a second at least: the checks may have used up the time on a slow bridge or a busy machine.
  if (Date.now() >= end - 1000 && !o.signal?.aborted)
    log("fuzzing: no round: the checks took all but the last second of --duration");
  while (Date.now() < end - 1000 && !o.signal?.aborted) {
    round++;
    const { checks, unreached } = coverage.round(all);
    const added: string[] = [];
    for (const check of checks) {
      const left = end - Date.now();
      if (left < 1000 || o.signal?.aborted) break;
      const seed = (o.seed + round * 7919) | 0;
      const finding = await runCheck(check, {
        ...o,
        seed,
        unreached,
        checkDeadlineMs: Math.min(o.checkDeadlineMs, left),
      });
      ran++;
      added.push(...coverage.add(check, finding));
      const known = results.get(check.id)!;
      // Only what the bridge did counts here: a check the deadline cut short proves nothing.
      const bridgeFault = finding.verdict === "fail" || finding.verdict === "warn";
      if (bridgeFault && VERDICT_ORDER.indexOf(finding.verdict) < VERDICT_ORDER.indexOf(known.finding.verdict)) {
        const report = redact.deep(toCheckReport(check, { seed, ...finding }, 0, o));
        results.set(check.id, { check, finding, report });
      }
    }
    if (unreached) coverage.roundAdded(added.length);
    if (added.length) log(`fuzzing: round ${round} reached ${added.length} more state cells: ${added.join(", ")}`);
    const failing = failingNow();
    // A progress line now and then (and when something new fails), not one per round.
    if (Date.now() - lastLog >= 5000 || failing !== lastFailing || Date.now() >= end - 1000) {
      log(
        `fuzzing: round ${round} done, ${failing} failing checks, ${Math.max(0, Math.round((end - Date.now()) / 1000))} s left`,
      );
      lastLog = Date.now();
      lastFailing = failing;
    }
  }
  return { rounds: round, checks: ran };
}
