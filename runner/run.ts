// A run against a bridge: look at the bridge, plan, execute the plan, fuzz until --duration ends,
// report. It knows no rule semantics: checks judge, it collects. The steps live in runner/run/.
import type { RuleId } from "../protocol/contract.js";
import { fanOut } from "../reports/index.js";
import type { Report } from "../reports/types.js";
import type { Check, Finding } from "../suites/harness/check.js";
import { redactor } from "../suites/harness/redact.js";
import { aggregate, type SkipReason, summarize, UNCOVERED } from "./aggregate.js";
import type { AttemptContext } from "./attempt.js";
import { baselineSection } from "./baseline.js";
import { fuzzUntil } from "./fuzz.js";
import { preflightProblem, probeConcurrency } from "./health.js";
import { rootCauses } from "./root-causes.js";
import type { RunConfig } from "./run/config.js";
import { alone, canJudge, execute, preflight } from "./run/execute.js";
import { joinStates, laneCount, openLanes } from "./run/lanes.js";
import { type Plan, plan, SHARD_REASON } from "./run/plan.js";
import { beginRun, recordUnjudged } from "./run/record.js";
import { Floating, type Run, RunState } from "./run/state.js";
import type { Target } from "./targets.js";
import { type LaneTime, laneTimeParts } from "./time.js";
import { TOOL } from "./tool.js";

export type { CaseMode, RunConfig } from "./run/config.js";
export { historyFillsOnce, SHARD_REASON } from "./run/plan.js";
/** The configuration of a run (the name it had before configuration and state were apart). */
export type RunOptions = RunConfig;

export const NOT_SELECTED = "not selected (--rules / --skip)";

/** A run's report, and the reporters that failed to write it (their onRunEnd threw). */
export interface RunOutcome {
  report: Report;
  lostReporters: string[];
}

export async function run(config: RunConfig): Promise<Report> {
  return (await runOutcome(config)).report;
}

export async function runOutcome(config: RunConfig): Promise<RunOutcome> {
  const started = Date.now();
  const redact = redactor(config.token);
  const write = config.log ?? ((line) => process.stderr.write(`${line}\n`));
  const log = (line: string) => write(redact.text(line));
  const { state, attempt } = await lookAtBridge(config);
  const whole = plan(config, attempt?.concurrentConnections);
  let lanes: Lane[] = [{ state, target: config.target }];
  if (!attempt || blocked(state)) {
    // One root cause, said once: no check can reach a verdict, so none is run or listed.
    for (const check of whole.chosen) recordUnjudged(config, state, redact, check, blockedFinding(state));
  } else {
    const progress = { begun: 0, total: whole.chosen.length };
    const first: Run = { config, plan: whole, state, attempt, log, redact, progress };
    await beginRun(first);
    // The canary before the first check learns the game loop's pace, which says whether more bridges would help.
    await preflight(first);
    lanes = await judgeInLanes(first, started);
  }
  const laneTimes = lanes.map((lane) => ({
    ms: (lane.ended ?? Date.now()) - started,
    restartsMs: lane.target?.restartMs ?? 0,
    stats: lane.state.stats,
  }));
  const joined = joinStates(
    lanes.map((lane) => lane.state),
    config.checks,
  );
  const report = redact.deep(toReport(config, whole, joined, started, laneTimes));
  const lostReporters = await fanOut(config.reporters, "onRunEnd", log, report);
  return { report, lostReporters };
}

/** Whether no check can reach a verdict on this bridge: the preflight found a fault no check judges. */
const blocked = (state: RunState): boolean => Boolean(state.blocked && state.blocked.faultJudges.length === 0);

/** What every check of a blocked bridge is recorded with: the preflight's one root cause. */
const blockedFinding = (state: RunState): Finding => ({
  verdict: "error",
  message: state.blocked!.problem,
  reasonKind: "blocked",
});

/** One bridge of a run, what it found, and when its last check ended. */
interface Lane {
  state: RunState;
  target: RunConfig["target"];
  ended?: number;
}

/**
 * The run's checks after the preflight: on its bridge alone, or dealt among it and the further bridges of
 * run/lanes.ts, side by side, each with its own preflight, plan and state. The checks that float (run/plan.ts) go to
 * whichever lane is free; the run's own bridge judges them while the others start, and each lane begins once ready.
 */
async function judgeInLanes(first: Run, started: number): Promise<Lane[]> {
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
          lookAtBridge(lane).then(({ state, attempt }) => {
            lanes[i + 1]!.state = state;
            const lanePlan = plan(lane, attempt?.concurrentConnections, true);
            if (attempt && !blocked(state))
              return { config: lane, plan: lanePlan, state, attempt, log, redact, progress, floating };
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

/**
 * Before any check: whether one can reach a verdict at all (the preflight), and whether the bridge
 * serves a second connection; the run's state starts from what they found.
 */
async function lookAtBridge(config: RunConfig): Promise<{ state: RunState; attempt?: AttemptContext }> {
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

/** The run's report, from its results and what it counted. */
function toReport(
  config: RunConfig,
  planned: Plan,
  state: RunState,
  started: number,
  lanes: readonly LaneTime[],
): Report {
  const { contract } = config;
  const { stats, ledger, coverage } = state;
  const rules = aggregate(contract, state.results.values(), config.selected, (id) =>
    skipReason(id, config, planned.runnable),
  );
  const blockedBy = blocked(state) ? state.blocked!.problem : undefined;
  const durationMs = Date.now() - started;
  const restartsMs = lanes.reduce((total, lane) => total + lane.restartsMs, 0);
  const report: Report = {
    schemaVersion: 1,
    tool: TOOL,
    contract: { version: contract.version, sha256: contract.sha256, rules: contract.rules.length },
    target: { kind: "bridge", ...config.targetInfo },
    seed: config.seed,
    runs: config.runs,
    ...(config.shard ? { shard: config.shard } : {}),
    startedAt: new Date(started).toISOString(),
    ...(config.signal?.aborted ? { interrupted: true as const } : {}),
    durationMs,
    summary: summarize(rules),
    ...(blockedBy ? { blocked: blockedBy } : {}),
    ...(state.stopped ? { stopped: state.stopped } : {}),
    ...(state.exits.length ? { targetExits: state.exits } : {}),
    ...(coverage.report() ? { stateCoverage: coverage.report() } : {}),
    ...(state.fuzzed ? { fuzz: { durationMs: config.durationMs!, ...state.fuzzed } } : {}),
    ...rootCauses(contract, state.results.values(), rules),
    wire: {
      lines: stats.lines,
      bytesSent: stats.bytesSent,
      bytesReceived: stats.bytesReceived,
      waitingMs: Math.round(stats.waitingMs),
    },
    time: {
      restartsMs,
      shrinkingMs: stats.shrinkingMs,
      recheckingMs: stats.recheckingMs,
      completionsMs: ledger.waitedMs,
      completionWaitMs: ledger.completionWaitMs(config.timeoutMs),
      slowestStepMs: Math.round(ledger.slowestStepMs),
      ...laneTimeParts(durationMs, lanes),
    },
    rules,
  };
  if (config.baseline) report.baseline = baselineSection(report, config.baseline, contract.prefix);
  return report;
}

function skipReason(id: RuleId, o: RunConfig, runnable: readonly Check[]): ReturnType<SkipReason> {
  const rule = o.contract.rule(id);
  if (rule.observed === "wire" && !runnable.some((c) => c.rules.includes(id)))
    return { kind: "uncovered", text: UNCOVERED };
  if (!o.selected(id)) return { kind: "not-chosen", text: NOT_SELECTED };
  if (o.onlyChecks)
    return {
      kind: "not-chosen",
      text: o.caseMode === "replay" ? "not part of this replay" : "not covered by the chosen checks (--check)",
    };
  if (rule.observed !== "wire") return { kind: "not-observable", text: rule.reason ?? `observed ${rule.observed}` };
  if (o.shard) return { kind: "other-shard", text: `${SHARD_REASON} (--shard ${o.shard.index}/${o.shard.count})` };
  return { kind: "not-run", text: "not run" };
}
