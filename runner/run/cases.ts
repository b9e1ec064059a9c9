// A check's verdict in a run, from its cases: its own seeds, a recorded case first where the run
// was given one (a replay, the corpus, --last-failed), and the recheck that grades a failure by
// re-sending its one case.
import { worst } from "../../protocol/verdict.js";
import type { Check, Finding } from "../../suites/harness/check.js";
import { type AttemptContext, attemptCheck, type Case, checkSeed } from "../attempt.js";
import { graded } from "../replay.js";
import type { RunConfig } from "./config.js";

/** How the run uses recorded cases. */
export type CaseUse = Pick<RunConfig, "cases" | "caseMode" | "freshSeed">;

/**
 * A check, with its recorded case where there is one. In "replay" mode only the case runs. In
 * the others, a case that still fails is the verdict; one that passes is followed by the
 * check's own cases, and the first of them to fail is the verdict: a rule is fixed only when
 * its recorded case and new cases pass. `freshSeed` (last-failed) adds a pass with a new seed.
 */
export async function judgeCheck(
  check: Check,
  o: AttemptContext,
  use: CaseUse,
  log: (line: string) => void,
): Promise<Finding> {
  const saved = use.cases?.get(check.id);
  const seeds = [o.seed, ...(use.caseMode === "last-failed" && use.freshSeed !== undefined ? [use.freshSeed] : [])];
  /** The check's own cases, seed after seed, from `from` on: the worst finding, and the first failure ends it. */
  const ownCases = async (from?: Finding): Promise<Finding> => {
    let finding = from;
    for (const seed of seeds) {
      const next = await attemptCheck(check, seed === o.seed ? o : { ...o, seed });
      finding = !finding || worst(finding.verdict, next.verdict) === next.verdict ? next : finding;
      if (next.verdict === "fail") break;
    }
    return finding!;
  };
  if (!saved) return ownCases();
  const first = await exactCase(check, o, saved);
  const replayed = {
    ...saved,
    verdict: first.verdict,
    ...(first.counterexample ? { case: first.counterexample } : {}),
  };
  if (use.caseMode === "replay") return { ...first, replayed };
  const label = use.caseMode === "last-failed" ? "last failed" : "corpus";
  if (first.verdict === "fail") {
    log(`${label}: STILL FAILING ${check.id}: the recorded case fails again`);
    return { ...first, replayed };
  }
  const replayable = first.verdict === "pass" || first.verdict === "warn";
  // A saved case the check can no longer run proves nothing either way: in the corpus the check's
  // own cases judge it; after --last-failed the rule cannot pass on cases that were not replayed.
  const finding = await ownCases(replayable || use.caseMode === "last-failed" ? first : undefined);
  if (!replayable) log(`${label}: COULD NOT REPLAY ${check.id}: ${first.message}`);
  else if (finding.verdict === "fail")
    log(`${label}: ${check.id}: the recorded case passes now, but a new case fails: ${finding.message}`);
  else log(`${label}: FIXED ${check.id}: the recorded case and new cases pass`);
  return { ...finding, replayed };
}

/**
 * Re-sends a failing check's case up to `tries` times, each exactly that one case, each on a fresh
 * bridge where this tool owns it (on fresh connections otherwise). A failure never seen again is
 * a warning; one seen some of the times is flaky and stays a failure. A try that reaches no
 * verdict counts neither way. A fault the first try brings back identically stays a failure
 * whatever the other tries show: they only tell consistent from flaky, and are paid for where they
 * fit a check's share of the time budget (GRADE_SHARE), a try counting the bridge it starts, or `everyTry` (a baseline
 * reads the grade).
 */
export async function recheck(
  check: Check,
  finding: Finding,
  o: AttemptContext,
  tries: number,
  everyTry = false,
): Promise<Finding> {
  if (tries <= 0) return finding;
  const exact: Case = {
    seed: finding.seed ?? checkSeed(o.seed, check.id),
    ...(finding.path !== undefined ? { path: finding.path } : {}),
    ...(finding.replayPath !== undefined ? { replayPath: finding.replayPath } : {}),
  };
  let ran = 0;
  let failed = 0;
  const started = Date.now();
  const restartsFrom = o.target.restartMs ?? 0;
  for (let i = 0; i < tries && !o.signal?.aborted; i++) {
    const tryStarted = Date.now();
    await o.target.restart?.();
    const attemptStarted = Date.now();
    const again = await attemptCheck(check, o, exact);
    if (again.verdict === "error" || again.verdict === "skip") continue;
    ran++;
    if (again.verdict === "fail") failed++;
    // Each try after this one starts a bridge: where a restart swaps in one started ahead, that start is still paid.
    const each = Math.max(Date.now() - tryStarted, (o.target.startMs ?? 0) + Date.now() - attemptStarted);
    const rest = each * (tries - i - 1);
    if (ran === 1 && !everyTry && sameFault(finding, again) && rest > o.timeBudgetMs / GRADE_SHARE) break;
  }
  if (o.stats) {
    o.stats.recheckingMs += Date.now() - started;
    o.stats.recheckRestartsMs += (o.target.restartMs ?? 0) - restartsFrom;
  }
  if (ran === 0) return finding;
  return graded(finding, ran, failed);
}

/** The part of the profile's time budget that tries telling a consistent fault from a flaky one may take. */
const GRADE_SHARE = 20;

/** Whether a try failed just as the finding did: on the same rules, expecting and seeing the same. */
const sameFault = (found: Finding, again: Finding): boolean =>
  again.verdict === found.verdict &&
  again.expected === found.expected &&
  again.actual === found.actual &&
  String(again.rules ?? []) === String(found.rules ?? []);

/** Why a replay runs a case more than once. */
const WHY_TRIES = "a fault that struck as often as the recheck saw it may strike only some runs";

/**
 * An exact case, run as often as its record asks (Case.tries): each try on a fresh bridge where
 * this tool owns it, ending at the first that does not pass. A rechecked case is fixed only when
 * it passes every try, and the finding says how many.
 */
async function exactCase(check: Check, o: AttemptContext, exact: Case): Promise<Finding> {
  const tries = exact.tries ?? 1;
  for (let i = 1; ; i++) {
    if (i > 1) await o.target.restart?.();
    const finding = await attemptCheck(check, o, exact);
    if (tries === 1) return finding;
    if (finding.verdict !== "pass")
      return exact.flaky ? { ...finding, message: `${finding.message} (try ${i} of ${tries}: ${WHY_TRIES})` } : finding;
    if (i === tries)
      return {
        ...finding,
        message: `${finding.message} It passed ${tries} tries in a row, each on a fresh bridge where this tool owns it (${WHY_TRIES}).`,
      };
  }
}
