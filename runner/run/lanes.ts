// Lanes: one run on several bridges of the same command, each judging a shard of the checks side by side. A bridge's
// game loop completes commands at its own pace, so where the checks wait on it, more bridges finish sooner; the
// shards are the ones --shard deals, so the verdicts are those of one bridge (docs/ARCHITECTURE.md, "Lanes").
import { type Check, shardUnit } from "../../suites/harness/check.js";
import type { Target } from "../targets.js";
import type { RunConfig } from "./config.js";
import { plan } from "./plan.js";
import { RunState } from "./state.js";

/**
 * How many bridges the run is dealt among: one unless it was asked for more (RunConfig.lanes) and the run can be
 * split: a shard already, fuzzing (--duration) and a stop after N failures (--max-failures) count over one bridge.
 */
export function laneCount(config: RunConfig): number {
  const asked = config.lanes?.count ?? 1;
  if (asked <= 1 || !config.target || config.shard || config.durationMs || config.maxFailures) return 1;
  // No more lanes than the shard dealing has units: a lane with nothing to judge is a bridge started for nothing.
  const units = new Set(plan(config, true).chosen.map(shardUnit)).size;
  return Math.max(1, Math.min(asked, units));
}

/**
 * The bridges of the lanes after the first (the run's own target): started together; one that does not start is
 * left out, said once, and the run goes on with those that did (a bridge on a fixed port cannot start twice).
 */
export async function openLanes(config: RunConfig, count: number, log: (line: string) => void): Promise<Target[]> {
  if (count <= 1 || !config.lanes) return [];
  const started = await Promise.allSettled(Array.from({ length: count - 1 }, () => config.lanes!.open()));
  const targets = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) {
    const why = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
    log(
      `aicontrol-conformance: --lanes ${count}: a further bridge did not start (${why}); the run goes on with ${targets.length + 1}`,
    );
  }
  return targets;
}

/**
 * The states of the lanes as one run's: results (in the order of `checks`, as one bridge would list them), counts and
 * exits together, the first stop of any.
 */
export function joinStates(states: readonly RunState[], checks: readonly Check[]): RunState {
  if (states.length === 1) return states[0]!;
  // Blocked only where no lane could judge: a lane that ran has results of its own.
  const joined = new RunState(states.every((s) => s.blocked) ? states[0]!.blocked : undefined);
  for (const check of checks) {
    const result = states.map((s) => s.results.get(check.id)).find(Boolean);
    if (!result) continue;
    joined.results.set(check.id, result);
    joined.coverage.add(result.check, result.finding);
  }
  for (const state of states) {
    joined.exits.push(...state.exits);
    joined.failures += state.failures;
    joined.stop ??= state.stop;
    joined.stopped ??= state.stopped;
    const { stats, ledger } = state;
    joined.stats.lines += stats.lines;
    joined.stats.bytesSent += stats.bytesSent;
    joined.stats.bytesReceived += stats.bytesReceived;
    joined.stats.waitingMs += stats.waitingMs;
    joined.stats.shrinkingMs += stats.shrinkingMs;
    joined.stats.recheckingMs += stats.recheckingMs;
    joined.stats.shrinkRestartsMs += stats.shrinkRestartsMs;
    joined.stats.recheckRestartsMs += stats.recheckRestartsMs;
    joined.ledger.waitedMs += ledger.waitedMs;
    joined.ledger.steps += ledger.steps;
    joined.ledger.stepsMs += ledger.stepsMs;
    joined.ledger.slowestStepMs = Math.max(joined.ledger.slowestStepMs, ledger.slowestStepMs);
  }
  return joined;
}
