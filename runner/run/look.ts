// Before any check: whether one can reach a verdict at all, and how the bridge serves; the state of a run (or of a
// lane's run, run/lanes.ts) starts from what this finds.
import type { Finding } from "../../suites/harness/check.js";
import type { AttemptContext } from "../attempt.js";
import { preflightProblem, probeConcurrency } from "../health.js";
import type { RunConfig } from "./config.js";
import { RunState } from "./state.js";

/**
 * Before any check: whether one can reach a verdict at all (the preflight), and whether the bridge
 * serves a second connection; the run's state starts from what they found.
 */
export async function lookAtBridge(config: RunConfig): Promise<{ state: RunState; attempt?: AttemptContext }> {
  if (!config.target) {
    const problem = `target unreachable: ${config.unreachable ?? "unknown"}`;
    return { state: new RunState({ kind: "unreachable", problem, faultJudges: [] }) };
  }
  const { contract, target, token, timeoutMs, checkDeadlineMs, timeBudgetMs, runs, seed, signal } = config;
  const base: AttemptContext = {
    contract,
    target,
    token,
    timeoutMs,
    checkDeadlineMs,
    timeBudgetMs,
    runs,
    seed,
    signal,
  };
  const problem = await preflightProblem(base, config.tokenEnv);
  const concurrentConnections = problem ? undefined : await probeConcurrency(base);
  const state = new RunState(problem);
  return { state, attempt: { ...base, concurrentConnections, stats: state.stats, ledger: state.ledger } };
}

/** Whether no check can reach a verdict on this bridge: the preflight found a fault no check judges. */
export const blocked = (state: RunState): boolean => Boolean(state.blocked && state.blocked.faultJudges.length === 0);

/** What every check of a blocked bridge is recorded with: the preflight's one root cause. */
export const blockedFinding = (state: RunState): Finding => ({
  verdict: "error",
  message: state.blocked!.problem,
  reasonKind: "blocked",
});
