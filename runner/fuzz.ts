// Time-boxed fuzzing after the fixed pass (--duration): the checks again with fresh seeds, aimed
// first at the state cells no check reached yet. A finding worse than the check's result so far
// is judged and recorded as in the fixed pass (recheck, --strict, the reporters).
import { worst } from "../protocol/verdict.js";
import type { Check } from "../suites/harness/check.js";
import { attemptCheck } from "./attempt.js";
import { judgedAlone } from "./run/execute.js";
import { record } from "./run/record.js";
import type { Run } from "./run/state.js";

/** Whether fuzzing goes on: time is left (a second at least), and nothing stopped the run. */
const goesOn = (run: Run, end: number) => Date.now() < end - 1000 && !run.config.signal?.aborted && !run.state.stop;

/**
 * Checks again with fresh seeds until `end`, first aimed at the state cells not reached yet (see
 * RunCoverage.round), then every check; the worst finding stays.
 */
export async function fuzzUntil(run: Run, end: number): Promise<{ rounds: number; checks: number }> {
  const { coverage, results } = run.state;
  coverage.endFixedPass();
  let round = 0;
  let ran = 0;
  let lastLog = Date.now();
  const failingNow = () => [...results.values()].filter((r) => r.finding.verdict === "fail").length;
  let lastFailing = failingNow();
  // A round needs a second at least: the checks may have used up the time on a slow bridge or a busy machine.
  if (!goesOn(run, end) && !run.config.signal?.aborted)
    run.log("fuzzing: no round: the checks took all but the last second of --duration");
  while (goesOn(run, end)) {
    round++;
    const { checks, unreached } = coverage.round(run.plan.chosen);
    const added: string[] = [];
    for (const check of checks) {
      if (!goesOn(run, end)) break;
      added.push(...(await fuzzOnce(run, check, (run.config.seed + round * 7919) | 0, end, unreached)));
      ran++;
    }
    if (unreached) coverage.roundAdded(added.length);
    if (added.length) run.log(`fuzzing: round ${round} reached ${added.length} more state cells: ${added.join(", ")}`);
    const failing = failingNow();
    // A progress line now and then (and when something new fails), not one per round.
    if (Date.now() - lastLog >= 5000 || failing !== lastFailing || Date.now() >= end - 1000) {
      const left = Math.max(0, Math.round((end - Date.now()) / 1000));
      run.log(`fuzzing: round ${round} done, ${failing} failing checks, ${left} s left`);
      lastLog = Date.now();
      lastFailing = failing;
    }
  }
  return { rounds: round, checks: ran };
}

/** One check with a round's seed: the state cells it reached first, and its finding recorded where worse. */
async function fuzzOnce(
  run: Run,
  check: Check,
  seed: number,
  end: number,
  unreached: readonly string[] | undefined,
): Promise<string[]> {
  const ctx = {
    ...run.attempt,
    seed,
    unreached,
    checkDeadlineMs: Math.min(run.config.checkDeadlineMs, end - Date.now()),
  };
  const t0 = Date.now();
  const finding = await judgedAlone(run, check, () => attemptCheck(check, ctx), ctx);
  const added = run.state.coverage.add(check, finding);
  const known = run.state.results.get(check.id)!.finding.verdict;
  // Only what the bridge did counts here: a check the deadline cut short proves nothing.
  const bridgeFault = finding.verdict === "fail" || finding.verdict === "warn";
  const strictly = run.config.strict && finding.verdict === "warn" ? "fail" : finding.verdict;
  if (bridgeFault && strictly !== known && worst(known, strictly) === strictly)
    await record(run, check, { seed, ...finding }, t0);
  return added;
}
