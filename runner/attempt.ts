// One attempt at a check: a fresh harness on the target, the check's own seed (or an exact
// case), and a deadline. The scheduler, the recheck and every replay run checks through it.
import type { Contract } from "../protocol/contract.js";
import type { Check, CommandLedger, Finding } from "../suites/harness/check.js";
import type { WireStats } from "../suites/harness/connection.js";
import { Harness } from "../suites/harness/harness.js";
import type { Target } from "./targets.js";

/** What one attempt needs: the target, its limits and its seed, and where it counts what it did. */
export interface AttemptContext {
  contract: Contract;
  target: Target;
  token?: string;
  timeoutMs: number;
  checkDeadlineMs: number;
  /** What a slow check may spend before skipping with the reason. */
  timeBudgetMs: number;
  runs: number;
  /** The run's seed (or a --duration round's): each check draws from its own seed, derived from it. */
  seed: number;
  /** Whether the bridge serves a second connection while one is open (from the run's probe). */
  concurrentConnections?: boolean;
  stats?: WireStats;
  ledger?: CommandLedger;
  /** State cells not reached yet, for the checks to aim at (--duration's rounds). */
  unreached?: readonly string[];
  /** Interrupts the run (Ctrl-C): the check under way ends at once, with no verdict. */
  signal?: AbortSignal;
}

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
export async function attemptCheck(check: Check, o: AttemptContext, exact?: Case): Promise<Finding> {
  const deadline = Date.now() + o.checkDeadlineMs;
  const harness = new Harness({
    contract: o.contract,
    endpoint: o.target,
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
          unjudged: { cause: "deadline" },
        }),
      o.checkDeadlineMs + o.timeoutMs,
    );
  });
  const interrupt = interruption(o.signal);
  try {
    const finding = await Promise.race([harness.runCase(() => check.run(harness)), overrun, interrupt.finding]);
    if (check.cleanUp && !finding.interrupted)
      await Promise.race([
        harness.runCase(async () => {
          await check.cleanUp!(harness, finding);
          return { verdict: "pass", message: "cleaned up" };
        }),
        overrun,
        interrupt.finding,
      ]);
    return finding;
  } finally {
    clearTimeout(timer);
    interrupt.dispose();
    harness.stop();
  }
}

export const INTERRUPTED = "interrupted: the run was stopped (Ctrl-C) while this check ran, so it has no verdict";

/**
 * The finding of a check the run was interrupted in (Ctrl-C): it settles as the signal fires, so the attempt ends at
 * once (its connections closed by the harness's stop) rather than after the check's cases, shrinking and rechecks.
 */
function interruption(signal: AbortSignal | undefined): { finding: Promise<Finding>; dispose(): void } {
  if (!signal) return { finding: new Promise<Finding>(() => {}), dispose() {} };
  let onAbort = () => {};
  const finding = new Promise<Finding>((resolve) => {
    onAbort = () => resolve({ verdict: "skip", message: INTERRUPTED, interrupted: true });
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return { finding, dispose: () => signal.removeEventListener("abort", onAbort) };
}
