// Lanes: one run on several bridges of the same command side by side, each judging a shard of the checks that share
// state or run in pools, and taking the checks that wait on the game loop alone as it becomes free. A bridge's game
// loop completes commands at its own pace, so where the checks wait on it, more bridges finish sooner; each check
// meets a bridge as one bridge's run would have it, so the verdicts are those of one bridge (docs/ARCHITECTURE.md).
import { worst } from "../../protocol/verdict.js";
import { type Check, type CommandLedger, shardUnit } from "../../suites/harness/check.js";
import { fuzzUntil } from "../fuzz.js";
import type { Target } from "../targets.js";
import type { RunConfig } from "./config.js";
import { alone, canJudge, execute, preflight } from "./execute.js";
import { blocked, blockedFinding, lookAtBridge } from "./look.js";
import { plan } from "./plan.js";
import { recordUnjudged } from "./record.js";
import { Floating, type Run, RunState } from "./state.js";

/**
 * The pace, in ms a completion, from which more bridges pay: below it a run waits on this tool, not on the game loop,
 * and more bridges would only take this tool's time from one another (a check that races the loop, filling its
 * queue faster than it drains, then could not).
 */
export const LANE_PACE_MS = 3;

/**
 * How many bridges the run is dealt among: one unless more were asked for (RunConfig.lanes; by default only where the
 * game loop's pace the preflight read, `ledger`, is slow enough to pay for them) and the run can be split: a shard
 * already, fuzzing (--duration) and a stop after N failures (--max-failures) count over one bridge.
 */
export function laneCount(config: RunConfig, ledger: CommandLedger): number {
  const asked = config.lanes?.count ?? 1;
  if (asked <= 1 || !config.target || config.shard || config.durationMs || config.maxFailures) return 1;
  if (config.signal?.aborted) return 1; // an interrupted run starts no more bridges
  if (config.lanes?.paced && (ledger.meanStepMs ?? 0) < LANE_PACE_MS) return 1;
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
  const targets: Target[] = [];
  const endpoints = new Set([config.target!.endpoint]);
  let why: string | undefined;
  for (const s of started) {
    if (s.status === "rejected") why ??= s.reason instanceof Error ? s.reason.message : String(s.reason);
    else if (endpoints.has(s.value.endpoint)) {
      // Its ready line names a bridge already in the run (a fixed port): two lanes on one bridge would meet.
      why ??= `it said it listens on ${s.value.endpoint}, as another does`;
      await s.value.stop().catch(() => undefined); // a stop that fails must not lose the lanes that did start
    } else {
      endpoints.add(s.value.endpoint);
      targets.push(s.value);
    }
  }
  if (why)
    log(
      `aicontrol-conformance: --lanes ${count}: a further bridge did not start (${why}); the run goes on with ${targets.length + 1}`,
    );
  return targets;
}

/**
 * The states of the lanes as one run's: results (the checks in the order of `checks`, as one bridge would list them,
 * then what the canary found), counts and exits together, the first stop of any. Each lane's preflight and canary
 * look at a bridge of the same command: a fault they find on several is one finding, the worst of them.
 */
export function joinStates(states: readonly RunState[], checks: readonly Check[]): RunState {
  if (states.length === 1) return states[0]!;
  // Blocked only where no lane could judge: a lane that ran has results of its own.
  const joined = new RunState(states.every((s) => s.blocked) ? states[0]!.blocked : undefined);
  const order = new Map(checks.map((check, i) => [check.id, i]));
  const results = states.flatMap((s) => [...s.results.values()]);
  const position = (id: string) => order.get(id) ?? checks.length;
  for (const result of results.sort((a, b) => position(a.check.id) - position(b.check.id))) {
    const known = joined.results.get(result.check.id);
    if (known && worst(known.finding.verdict, result.finding.verdict) === known.finding.verdict) continue;
    joined.results.set(result.check.id, result);
  }
  for (const result of joined.results.values()) {
    joined.coverage.add(result.check, result.finding);
    if (result.finding.verdict === "fail") joined.failures++;
  }
  for (const state of states) {
    joined.exits.push(...state.exits);
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

/** One bridge of a run, what it found, and when its last check ended. */
export interface Lane {
  state: RunState;
  target: RunConfig["target"];
  ended?: number;
}

/**
 * The run's checks after the preflight: on its bridge alone, or dealt among it and the further bridges of
 * run/lanes.ts, side by side, each with its own preflight, plan and state. The checks that float (run/plan.ts) go to
 * whichever lane is free; the run's own bridge judges them while the others start, and each lane begins once ready.
 */
export async function judgeInLanes(first: Run, started: number): Promise<Lane[]> {
  const { config, log, redact, progress } = first;
  const serves = first.attempt.concurrentConnections;
  const asked = laneCount(config, first.state.ledger);
  const lanes: Lane[] = [{ state: first.state, target: config.target }];
  let ready: Promise<Run | undefined>[] = [Promise.resolve(first)];
  let others: Target[] = [];
  try {
    if (asked > 1) {
      const floating = new Floating(plan(config, serves, true).floating);
      floating.join();
      let opened = false;
      const opening = openLanes(config, asked, log).finally(() => {
        opened = true;
      });
      const meanwhile = (async () => {
        for (let check: Check | undefined; !opened && canJudge(first) && (check = floating.take(true)); )
          await alone(first, check);
      })();
      meanwhile.catch(() => undefined); // its failure is the first lane's, met where that lane begins
      others = await opening;
      const count = others.length + 1;
      const shard = (index: number, target: RunConfig["target"]) => ({ ...config, target, shard: { index, count } });
      const mine = shard(1, config.target);
      ready = [
        meanwhile.then(() => {
          if (count > 1) return { ...first, config: mine, plan: plan(mine, serves, true), floating };
          // No further bridge started: the run's own judges the checks left as one bridge does.
          const left = plan(config, serves).chosen.filter((check) => !first.state.results.has(check.id));
          return { ...first, plan: plan({ ...config, onlyChecks: new Set(left.map((check) => check.id)) }, serves) };
        }),
      ];
      for (const [i, target] of others.entries()) {
        const lane = shard(i + 2, target);
        const state = new RunState(); // until the lane has looked at its bridge
        lanes.push({ state, target });
        floating.join();
        ready.push(
          lookAtBridge(lane).then(async ({ state, attempt }) => {
            lanes[i + 1]!.state = state;
            const lanePlan = plan(lane, attempt?.concurrentConnections, true);
            if (attempt && !blocked(state)) {
              const run: Run = { config: lane, plan: lanePlan, state, attempt, log, redact, progress, floating };
              // Its shard is dealt from the whole order, where checks before each left more than the canary's one
              // command: the bridge is not started afresh for it (its floating checks start on a fresh one).
              await preflight(run, false);
              return run;
            }
            const unjudged = (check: Check) => recordUnjudged(lane, state, redact, check, blockedFinding(state));
            for (const check of lanePlan.chosen) unjudged(check);
            // The last lane left records the floating checks no lane took: each is recorded, none lost.
            for (let check = floating.take(false); check; check = floating.take(false)) unjudged(check);
            floating.leave();
            return undefined;
          }),
        );
      }
    }
    // Every lane ends before any bridge is stopped: one that threw does not pull the others' bridges away.
    const ran = await Promise.allSettled(
      ready.map(async (readied) => {
        const running = await readied;
        if (!running) return;
        await execute(running);
        if (config.durationMs && !running.state.stop && !config.signal?.aborted)
          running.state.fuzzed = await fuzzUntil(running, started + config.durationMs);
        lanes.find((lane) => lane.state === running.state)!.ended = Date.now();
      }),
    );
    const thrown = ran.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (thrown) throw thrown.reason;
    return lanes;
  } finally {
    await Promise.all(others.map((target) => target.stop()));
  }
}
