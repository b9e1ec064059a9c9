// The plan carried out: the canary before the first check, each stretch alone or in a pool, and
// after a failure the canary again, a lost bridge restarted and the failure rechecked.
import type { CheckInfo } from "../../reports/types.js";
import type { Check, Finding } from "../../suites/harness/check.js";
import type { AttemptContext } from "../attempt.js";
import { knownFlaky } from "../baseline.js";
import { diagnose, diagnosisId, inconclusive, lostTarget, PREFLIGHT } from "../health.js";
import { judgeCheck, recheck } from "./cases.js";
import { beginCheck, record } from "./record.js";
import type { Floating, Run } from "./state.js";

/**
 * The canary before the first check, once: a bridge broken before the run is named as such, not after whichever check
 * comes first. `afresh`: a bridge this tool owns then starts afresh, so the first check does not meet the canary's.
 */
export async function preflight(run: Run, afresh = true): Promise<void> {
  if (run.state.preflighted) return;
  run.state.preflighted = true;
  if (!run.state.stop) await diagnosed(run, PREFLIGHT, afresh);
}

/** Runs the plan's stretches in order, after the canary has looked at the bridge; in a lane, then floating checks. */
export async function execute(run: Run): Promise<void> {
  await preflight(run);
  for (const stretch of run.plan.stretches) {
    if (stretch.length > 1) await pooled(run, stretch);
    else await alone(run, stretch[0]!);
  }
  if (run.floating) await floatingChecks(run, run.floating);
}

/**
 * Floating checks, one at a time, while this lane can judge them (or no other lane is left to). They start on a fresh
 * bridge and follow one another on it, as one bridge runs them before its history is filled.
 */
async function floatingChecks(run: Run, floating: Floating): Promise<void> {
  try {
    if (floating.left() && !run.state.stop && !run.config.signal?.aborted) {
      await run.config.target?.restart?.().catch((err: unknown) => {
        run.state.stop = { problem: `the bridge could not be started afresh: ${(err as Error).message}` };
      });
    }
    for (let check: Check | undefined; (check = floating.take(canJudge(run))); ) await alone(run, check);
  } finally {
    floating.leave();
  }
}

/** Whether this run can still judge a check that needs completions. */
export const canJudge = (run: Run): boolean => !run.state.stop && !run.state.stopped;

/** The run's own cases of a check: its seed, with the recorded case first where there is one. */
const ownCases = (run: Run, check: Check) => () => judgeCheck(check, run.attempt, run.config, run.log);

/** One check alone on the bridge, recorded; begun already where a pool ran it first. */
export async function alone(run: Run, check: Check, begunAs?: CheckInfo): Promise<void> {
  const info = begunAs ?? (await beginCheck(run, check));
  const t0 = Date.now();
  await record(run, check, await judgedAlone(run, check, ownCases(run, check)), t0, info);
}

/**
 * A check's finding where it runs alone: why it is not run now, or what `attempt` found. A
 * failure is followed by the canary and rechecked, on `ctx` (the run's, or a --duration round's).
 */
export async function judgedAlone(
  run: Run,
  check: Check,
  attempt: () => Promise<Finding>,
  ctx: AttemptContext = run.attempt,
): Promise<Finding> {
  const { state } = run;
  let finding = notRunNow(run, check) ?? (await attempt());
  if (state.stop || (finding.verdict !== "fail" && finding.verdict !== "error")) return finding;
  await afterFailure(run, check);
  // A bridge the failure left unable to serve cannot show whether the failure repeats.
  if (finding.verdict === "fail" && !state.stop && !(state.stopped && check.needs?.length)) {
    finding = await recheck(check, finding, ctx, run.config.recheck ?? 0, knownFlaky(run.config.baseline, check));
    if (finding.reproduced?.failed) await afterFailure(run, check);
  }
  return finding;
}

/**
 * Checks that share no bridge state, several at a time. What one of them did to the bridge
 * must not be blamed on another: a check that failed, or that overlapped a restart, is run
 * again alone, and that run is its verdict.
 */
async function pooled(run: Run, group: readonly Check[]): Promise<void> {
  const { state } = run;
  const target = run.config.target!;
  const again = new Map<Check, CheckInfo>();
  let next = 0;
  const worker = async () => {
    for (let check = group[next++]; check; check = group[next++]) {
      const early = notRunNow(run, check);
      if (early) {
        await record(run, check, early, Date.now(), await beginCheck(run, check));
        continue;
      }
      const restarts = target.restarts;
      const info = await beginCheck(run, check);
      const t0 = Date.now();
      const finding = await ownCases(run, check)();
      // A bridge that exited beside this check may have been killed by another: judged alone again.
      const overlapped = target.restarts !== restarts || target.exited?.();
      // The history's filler reaches any other verdict than a pass alone: its pace, read beside the others, may
      // be too slow for the budget where alone it is not.
      const againAlone = finding.verdict === "fail" || finding.verdict === "error" || overlapped;
      if (againAlone || (check === run.plan.historyFiller && finding.verdict !== "pass")) again.set(check, info);
      else await record(run, check, finding, t0, info);
    }
  };
  await Promise.all(Array.from({ length: Math.min(run.plan.concurrency, group.length) }, worker));
  // An exit during the pool belongs to the check that brings it about alone, not to whichever
  // check ends first after it: held back while they run again, and kept if none repeats it.
  const pooledExit = target.takeExit?.();
  const reported = state.exits.length;
  const rerun = group.filter((check) => again.has(check));
  for (const check of rerun) await alone(run, check, again.get(check));
  if (pooledExit && state.exits.length === reported) {
    const blamed =
      rerun.find((c) => ["fail", "error"].includes(state.results.get(c.id)?.finding.verdict ?? "")) ?? rerun[0];
    state.exits.push({ check: blamed?.id ?? group[0]!.id, ...pooledExit });
  }
}

/** Why a check is not run now (the run was interrupted or stopped, or what it needs stopped), or undefined. */
function notRunNow(run: Run, check: Check): Finding | undefined {
  const { config, state } = run;
  if (config.signal?.aborted) state.stop = { problem: "not run: the run was interrupted", interrupted: true };
  if (!state.stop && config.maxFailures && state.failures >= config.maxFailures) {
    const failures = state.failures === 1 ? "the first failure" : `${state.failures} failures`;
    state.stop = {
      problem: `not run: stopped after ${failures} (${config.stopFlag ?? "--max-failures"})`,
      interrupted: true,
    };
  }
  if (state.stop && !state.blocked?.faultJudges.includes(check.id))
    return {
      verdict: state.stop.interrupted ? "skip" : "error",
      message: state.stop.problem,
      reasonKind: state.stop.interrupted ? "not-run" : state.stop === state.blocked ? "blocked" : "inconclusive",
      ...(state.stop.after ? { unjudged: { cause: "stopped" as const, after: state.stop.after } } : {}),
    };
  if (state.stopped && check.needs?.includes(state.stopped.duty as "completions"))
    return {
      verdict: "error",
      message: inconclusive(state.stopped),
      reasonKind: "inconclusive",
      unjudged: { cause: "stopped", after: state.stopped.after },
    };
  return undefined;
}

/**
 * After a failure: is the bridge still there (restarted where owned), and does it still serve? A
 * bridge started afresh since the failure holds nothing the check left: the canary would find
 * there only what it found before the first check, on a bridge just as fresh.
 */
async function afterFailure(run: Run, check: Check): Promise<void> {
  const { state } = run;
  if (run.config.signal?.aborted) return; // the report is due now: no canary, no restart
  state.stop = await lostTarget(check, run.attempt);
  if (!state.stop && !state.stopped && !run.config.target?.fresh) await diagnosed(run, check.id);
}

/**
 * What the canary found, at `at` (before the first check, or after a failing check): faults on
 * their own rules, recorded once each, and what stopped.
 */
async function diagnosed(run: Run, at: string, afresh = true): Promise<void> {
  const { state } = run;
  const found = await diagnose(at, run.attempt, state.canary, afresh);
  for (const finding of found.findings) {
    const check: Check = {
      id: diagnosisId(at, finding.rules?.[0] ?? "serving"),
      rules: finding.rules ?? [],
      description:
        at === PREFLIGHT
          ? "Before the first check: acts with an advertised command type and waits for its completion."
          : `After ${at} failed: lets the queue drain, acts with a type that completed before, and follows its completion.`,
      run: async () => finding,
    };
    if (!state.results.has(check.id)) await record(run, check, finding, Date.now());
  }
  if (found.problem) state.stop = { problem: found.problem, after: at };
  else if (found.stopped) state.stopped = found.stopped;
}
