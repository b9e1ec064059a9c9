// A run against a bridge: look at the bridge, plan, execute the plan, fuzz until --duration ends,
// report. It knows no rule semantics: checks judge, it collects. The steps live in runner/run/.
import type { RuleId } from "../protocol/contract.js";
import { fanOut } from "../reports/index.js";
import type { Report } from "../reports/types.js";
import type { Check } from "../suites/harness/check.js";
import { redactor } from "../suites/harness/redact.js";
import { aggregate, type SkipReason, summarize, UNCOVERED } from "./aggregate.js";
import { baselineSection } from "./baseline.js";
import { rootCauses } from "./root-causes.js";
import type { RunConfig } from "./run/config.js";
import { preflight } from "./run/execute.js";
import { joinStates, judgeInLanes, type Lane } from "./run/lanes.js";
import { blocked, blockedFinding, lookAtBridge } from "./run/look.js";
import { type Plan, plan, SHARD_REASON } from "./run/plan.js";
import { beginRun, recordUnjudged } from "./run/record.js";
import type { Run, RunState } from "./run/state.js";
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
