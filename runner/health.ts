// What the runner asks of the bridge around the checks: before them, whether any verdict can be
// reached, whether a second connection is served and whether a command completes; after a
// failure, whether the bridge is still there and what, if anything, it stopped doing. The
// answers come from suites/harness (preflight, canary); this file only runs them and says what
// they mean for the checks still to come.
import type { Report } from "../reports/types.js";
import { type CanaryMemory, canary, completedNothing, type Health } from "../suites/harness/canary.js";
import type { Check, CheckContext, Finding } from "../suites/harness/check.js";
import { Connection } from "../suites/harness/connection.js";
import { type Blocked, preflight, servesConcurrently } from "../suites/harness/preflight.js";
import { type AttemptContext, attemptCheck } from "./attempt.js";
import { graded } from "./replay.js";

/** Runs `body` as a check runs (its own harness, connections and deadline); undefined if it threw. */
async function probe<T>(id: string, o: AttemptContext, body: (ctx: CheckContext) => Promise<T>) {
  let value: T | undefined;
  const check: Check = {
    id,
    rules: [],
    description: "",
    run: async (ctx) => {
      value = await body(ctx);
      return { verdict: "pass", message: "probed" };
    },
  };
  const finding = await attemptCheck(check, o);
  return { value, finding };
}

/** Why no check can reach a verdict (the bridge is gone, a token is missing, it answers nothing), or undefined. */
export async function preflightProblem(o: AttemptContext, tokenEnv: string): Promise<Blocked | undefined> {
  return (await probe("preflight", o, (ctx) => preflight(ctx, tokenEnv))).value;
}

/** Whether the bridge serves a second connection while one is open; undefined when the probe could not tell. */
export async function probeConcurrency(o: AttemptContext): Promise<boolean | undefined> {
  return (await probe("connections", o, servesConcurrently)).value;
}

/** After a failing check: is the bridge still there? Restart one this tool owns; otherwise stop judging. */
export async function lostTarget(
  check: Check,
  o: AttemptContext,
): Promise<{ problem: string; after: string } | undefined> {
  const target = o.target;
  try {
    (
      await Connection.open(target.host, target.port, { maxLineBytes: 1, connectTimeoutMs: o.timeoutMs, record: false })
    ).close();
    return undefined;
  } catch {
    if (target.restart) {
      try {
        await target.restart({ force: true });
        return undefined;
      } catch (err) {
        return {
          problem: `the bridge stopped during ${check.id} and could not be restarted: ${(err as Error).message}`,
          after: check.id,
        };
      }
    }
    return {
      problem: `the bridge stopped accepting connections during ${check.id}, so nothing after it can be judged`,
      after: check.id,
    };
  }
}

/** What the canary found: the run stops, checks that need completions cannot be judged, or a fault on its own rule. */
export interface Diagnosis {
  problem?: string;
  stopped?: NonNullable<Report["stopped"]>;
  /** Faults found while finding out, each judged on its own rule (by the canary, not by the check before it). */
  findings: Finding[];
}

/** The moment the canary ran at: before the first check, or after the check named. */
export const PREFLIGHT = "preflight";

/** The ID a diagnosis is recorded under: what the canary found at a moment, on one rule. */
export const diagnosisId = (at: string, rule: string): string => `${at === PREFLIGHT ? "preflight" : "canary"}/${rule}`;

/** Whether a check ID names a diagnosis rather than a check of the catalogue. */
export const isDiagnosis = (id: string): boolean => id.startsWith("preflight/") || id.startsWith("canary/");

/**
 * Does the bridge still answer and complete commands (before the first check: does it at all)?
 * After a check, one this tool owns is restarted; at an endpoint, a bridge that no longer
 * answers stops the run, and one that no longer completes commands makes the checks that need
 * completions inconclusive. Before the first check, a bridge that completes nothing fails the
 * canary's rule on completion (completedNothing), and it is named as broken before the run.
 */
export async function diagnose(
  after: string,
  o: AttemptContext,
  memory: CanaryMemory,
  afresh = true,
): Promise<Diagnosis> {
  let health = await look(o, memory);
  const findings = health.finding ? [health.finding] : [];
  if (after === PREFLIGHT && health.replies && !health.completions) {
    // A completion that did not come within the wait rests on time: a busy machine may have held it. Looked
    // for once more, one that comes then is a warning, seen once and not reproduced, never the run's stop.
    const again = await look(o, memory);
    if (again.replies && again.completions) {
      findings.push(graded(completedNothing(health.detail), 1, 0));
      health = again;
    }
  }
  // The canary's own command must not be what the first check finds: a bridge this tool owns starts afresh (unless
  // not `afresh`: a lane's first check comes from the middle of one bridge's order, after more than one command).
  if (after === PREFLIGHT && afresh && health.replies && health.completions) await o.target.restart?.();
  if (health.replies && health.completions) return { findings };
  if (after === PREFLIGHT) {
    const broken = completedNothing(health.detail);
    return { findings: [...findings, broken], stopped: { duty: "completions", after, detail: health.detail } };
  }
  if (o.target.restart) {
    await o.target.restart({ force: true });
    return { findings };
  }
  if (!health.replies)
    return {
      findings,
      problem: `the bridge stopped answering after ${after} (${health.detail}), so nothing after it can be judged`,
    };
  return { findings, stopped: { duty: "completions", after, detail: health.detail } };
}

/** What the canary finds now; a canary that threw tells only that. */
async function look(o: AttemptContext, memory: CanaryMemory): Promise<Health> {
  const probed = await probe("canary", o, (ctx) => canary(ctx, memory));
  const health: Health = probed.value ?? { replies: false, completions: false, detail: probed.finding.message };
  if (health.goodType) memory.goodType = health.goodType;
  return health;
}

/** Why a check that needs what stopped cannot be judged. */
export const inconclusive = (s: NonNullable<Report["stopped"]>) =>
  s.after === PREFLIGHT
    ? `inconclusive: the bridge completed no command before the first check (${s.detail}), so this check cannot be judged`
    : `inconclusive: the bridge stopped completing commands after ${s.after} (${s.detail}), so this check cannot be judged`;
