// The one way a check's result is written: the fixed pass, a pool, a recheck and --duration all
// come here, so --strict, the failure count, coverage, exits and the reporters see every result.
import { fanOut } from "../../reports/index.js";
import type { CheckInfo } from "../../reports/types.js";
import type { Check, Finding } from "../../suites/harness/check.js";
import type { Redactor } from "../../suites/harness/redact.js";
import { toCheckReport } from "../aggregate.js";
import type { RunConfig } from "./config.js";
import type { Run, RunState } from "./state.js";

export const checkInfo = (check: Check): CheckInfo => ({
  id: check.id,
  rules: check.rules,
  description: check.description,
});

/** Tells the reporters the run starts. */
export async function beginRun(run: Run): Promise<void> {
  const { label, endpoint, spawned } = run.attempt.target;
  await fanOut(run.config.reporters, "onRunStart", run.log, {
    target: run.redact.deep({ label, endpoint, spawned }),
    seed: run.config.seed,
    checks: run.progress.total,
    profile: run.config.profile,
    strict: run.config.strict,
  });
}

/** Tells the reporters a check starts. */
export async function beginCheck(run: Run, check: Check): Promise<CheckInfo> {
  const info = checkInfo(check);
  await fanOut(run.config.reporters, "onCheckStart", run.log, info, run.progress.begun++, run.progress.total);
  return info;
}

/** Writes a check's result, begun at `t0`, and tells the reporters. */
export async function record(run: Run, check: Check, found: Finding, t0: number, info = checkInfo(check)) {
  const { config, state } = run;
  let finding = found;
  if (config.strict && finding.verdict === "warn") {
    finding = { ...finding, verdict: "fail", message: `${finding.message} (a warning; --strict makes it a failure)` };
  }
  if (finding.verdict === "fail") state.failures++;
  state.coverage.add(check, found);
  // Reporters tell of it once, with the root causes, at the end.
  const exit = config.target?.takeExit?.();
  if (exit) state.exits.push({ check: check.id, ...exit });
  const report = run.redact.deep(toCheckReport(check, finding, Date.now() - t0, config));
  state.results.set(check.id, { check, finding, report });
  await fanOut(config.reporters, "onCheckEnd", run.log, info, report);
}

/** Where no check can reach a verdict: each gets the one root cause, and no check is begun. */
export function recordUnjudged(config: RunConfig, state: RunState, redact: Redactor, check: Check, finding: Finding) {
  state.results.set(check.id, { check, finding, report: redact.deep(toCheckReport(check, finding, 0, config)) });
}
