// A run against a bridge: look at the bridge, plan, execute the plan, fuzz until --duration ends,
// report. It knows no rule semantics: checks judge, it collects. The steps live in runner/run/.
import type { RuleId } from "../protocol/contract.js";
import { fanOut } from "../reports/index.js";
import type { Report } from "../reports/types.js";
import type { Check } from "../suites/harness/check.js";
import { redactor } from "../suites/harness/redact.js";
import { aggregate, type SkipReason, summarize, UNCOVERED } from "./aggregate.js";
import type { AttemptContext } from "./attempt.js";
import { baselineSection } from "./baseline.js";
import { fuzzUntil } from "./fuzz.js";
import { preflightProblem, probeConcurrency } from "./health.js";
import { rootCauses } from "./root-causes.js";
import type { RunConfig } from "./run/config.js";
import { execute } from "./run/execute.js";
import { joinStates, laneCount, openLanes } from "./run/lanes.js";
import { type Plan, plan, SHARD_REASON } from "./run/plan.js";
import { beginRun, recordUnjudged } from "./run/record.js";
import { type Run, RunState } from "./run/state.js";
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
  const others = await openLanes(config, laneCount(config), log);
  try {
    const targets = [config.target, ...others];
    // Several bridges: each judges one shard of the run, dealt as --shard deals it (run/lanes.ts).
    const lanes = targets.map((target, i) =>
      targets.length > 1 ? { ...config, target, shard: { index: i + 1, count: targets.length } } : config,
    );
    const looked = await Promise.all(lanes.map(lookAtBridge));
    const plans = lanes.map((lane, i) => plan(lane, looked[i]!.attempt?.concurrentConnections));
    const progress = { begun: 0, total: plans.reduce((total, p) => total + p.chosen.length, 0) };
    const runs: Run[] = [];
    for (const [i, lane] of lanes.entries()) {
      const { state, attempt } = looked[i]!;
      if (attempt && !(state.blocked && state.blocked.faultJudges.length === 0)) {
        runs.push({ config: lane, plan: plans[i]!, state, attempt, log, redact, progress });
        continue;
      }
      // One root cause, said once: no check can reach a verdict, so none is run or listed.
      const finding = { verdict: "error" as const, message: state.blocked!.problem, reasonKind: "blocked" as const };
      for (const check of plans[i]!.chosen) recordUnjudged(lane, state, redact, check, finding);
    }
    if (runs.length) await beginRun(runs[0]!);
    const ended = new Map<RunState, number>();
    await Promise.all(
      runs.map(async (running) => {
        await execute(running);
        if (config.durationMs && !running.state.stop && !config.signal?.aborted)
          running.state.fuzzed = await fuzzUntil(running, started + config.durationMs);
        ended.set(running.state, Date.now());
      }),
    );
    const now = Date.now();
    const laneTimes = looked.map(({ state }, i) => ({
      ms: (ended.get(state) ?? now) - started,
      restartsMs: targets[i]?.restartMs ?? 0,
      stats: state.stats,
    }));
    const state = joinStates(
      looked.map((l) => l.state),
      config.checks,
    );
    const report = redact.deep(toReport(config, plans[0]!, state, started, laneTimes));
    const lostReporters = await fanOut(config.reporters, "onRunEnd", log, report);
    return { report, lostReporters };
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
  const blocked = await preflightProblem(base, config.tokenEnv);
  const concurrentConnections = blocked ? undefined : await probeConcurrency(base);
  const state = new RunState(blocked);
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
  const blocked = state.blocked && state.blocked.faultJudges.length === 0 ? state.blocked.problem : undefined;
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
    ...(blocked ? { blocked } : {}),
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
