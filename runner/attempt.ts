// One attempt at a check: a fresh harness on the target, the check's own seed (or an exact
// case), and a deadline. The scheduler, the recheck and every replay run checks through it.
import type { Check, Finding } from "../suites/harness/check.js";
import { Harness } from "../suites/harness/harness.js";
import type { RunOptions } from "./run.js";

/** One exact case of a check: the seed, and the fast-check path of the shrunk input. */
export interface Case {
  seed: number;
  path?: string;
  /** The commands of a stateful case (fast-check's replayPath). */
  replayPath?: string;
  /** Cases per property when the case was found: a check's examples, and so a path, may depend on it. */
  runs?: number;
  /**
   * Passes in a row a replay needs before it calls the case fixed: more than one for a rechecked case,
   * whose fault may strike only some runs (see `triesToTrust` in runner/replay.ts).
   */
  tries?: number;
  /** The recheck saw the fault strike only some of its tries (graded flaky). */
  flaky?: true;
}

/**
 * A check's own seed, from the run's seed and its ID: a check draws the same cases whatever
 * runs before it, beside it or in another shard, so serial, concurrent and sharded runs agree.
 */
export function checkSeed(runSeed: number, checkId: string): number {
  let hash = 0x811c9dc5 ^ runSeed; // FNV-1a over the ID, started from the run's seed
  for (let i = 0; i < checkId.length; i++) hash = Math.imul(hash ^ checkId.charCodeAt(i), 0x01000193);
  return hash & 0x7fffffff; // non-negative, so a printed --seed reads plainly
}

/** Runs a check once on the target; with `exact`, only that case (no later cases, no shrinking). */
export async function runCheck(check: Check, o: RunOptions, exact?: Case): Promise<Finding> {
  const deadline = Date.now() + o.checkDeadlineMs;
  const harness = new Harness({
    contract: o.contract,
    endpoint: o.target!,
    token: o.token,
    timeoutMs: o.timeoutMs,
    runs: exact?.runs ?? o.runs,
    timeBudgetMs: o.timeBudgetMs,
    seed: exact?.seed ?? checkSeed(o.seed, check.id),
    path: exact?.path,
    replayPath: exact?.replayPath,
    concurrentConnections: o.concurrentConnections,
    stats: o.stats,
    ledger: o.ledger,
    unreached: o.unreached,
    deadline,
  });
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<Finding>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          verdict: "error",
          message: `the check did not finish within its deadline of ${o.checkDeadlineMs} ms`,
        }),
      o.checkDeadlineMs + o.timeoutMs,
    );
  });
  try {
    const finding = await Promise.race([harness.runCase(() => check.run(harness)), overrun]);
    if (check.cleanUp)
      await Promise.race([
        harness.runCase(async () => {
          await check.cleanUp!(harness, finding);
          return { verdict: "pass", message: "cleaned up" };
        }),
        overrun,
      ]);
    return finding;
  } finally {
    clearTimeout(timer);
    harness.stop();
  }
}
