// A report's cases taken up again: the exact case each failure recorded and how many passes in a
// row call it fixed, the target a re-run goes to, its command line and how a recheck grades a finding. The
// cases themselves run in runner/run/cases.ts. A claim that a case is FIXED rests on that one case
// on the target that failed: no later cases, no shrinking, no silent change of target.
import { contract as shipped } from "../protocol/contract.js";
import type { CheckReport, Report } from "../reports/types.js";
import type { Check, Finding } from "../suites/harness/check.js";
import { formatHostPort } from "../suites/harness/connection.js";
import { type Case, checkSeed } from "./attempt.js";
import { OPTIONS, type OptionValues } from "./cli/options/table.js";
import { UsageError } from "./cli/options/value.js";

export type { CaseMode } from "./run/config.js";

/** How sure a replay must be that a case no longer fails before it calls it fixed. */
const FALSE_FIX_AT_MOST = 0.05;
/** The most passes in a row a replay asks of a case. */
const MOST_TRIES = 20;

/**
 * The lowest rate of failure that still shows `failed` or more failures in `tries` at least
 * FALSE_FIX_AT_MOST of the time (the one-sided Clopper-Pearson bound): how rarely the fault may
 * strike, as far as the record can tell. Four failures in four tries allow a fault of about one in two.
 */
function lowestRate(failed: number, tries: number): number {
  if (failed <= 0) return 0;
  const atLeast = (p: number) => {
    let sum = 0;
    for (let k = failed; k <= tries; k++) sum += binomial(tries, k) * p ** k * (1 - p) ** (tries - k);
    return sum;
  };
  let [low, high] = [0, 1];
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (atLeast(mid) < FALSE_FIX_AT_MOST) low = mid;
    else high = mid;
  }
  return low;
}

function binomial(n: number, k: number): number {
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - i + 1)) / i;
  return c;
}

/**
 * Passes in a row that a case failing `failed` times in `tries` would show by chance no more often
 * than FALSE_FIX_AT_MOST, taking the fault as rare as the record allows: a case that failed every
 * time it was tried may still be a fault that strikes only some connections.
 */
export function triesToTrust(failed: number, tries: number): number {
  const rate = lowestRate(failed, tries);
  if (rate >= 1) return 1;
  if (rate <= 0) return MOST_TRIES;
  return Math.max(1, Math.min(MOST_TRIES, Math.ceil(Math.log(FALSE_FIX_AT_MOST) / Math.log(1 - rate))));
}

/** The exact case a report recorded for a check: its seed (its own, or derived from the run's), path and run count. */
export function recordedCase(report: Report, check: CheckReport): Case {
  // The failure itself is one more time the case failed than its recheck counted. A case never rechecked
  // has no record of how often it fails: one pass is all its replay can ask.
  const seen = check.reproduced;
  const tries = seen ? triesToTrust(seen.failed + 1, seen.tries + 1) : 1;
  return {
    seed: check.seed ?? checkSeed(report.seed, check.id),
    ...(check.path !== undefined ? { path: check.path } : {}),
    ...(check.replayPath ? { replayPath: check.replayPath } : {}),
    ...(report.runs ? { runs: report.runs } : {}),
    ...(tries > 1 ? { tries } : {}),
    ...(seen?.grade === "flaky" ? { flaky: true as const } : {}),
  };
}

/** The failing (and warning) cases of a report, to run again exactly. */
export function failingCases(
  report: Report,
  only: readonly string[] | undefined,
  verdicts: readonly string[] = ["fail", "warn"],
): Map<string, Case> {
  const cases = new Map<string, Case>();
  for (const check of report.rules.flatMap((r) => r.checks ?? [])) {
    if (!verdicts.includes(check.verdict)) continue;
    if (only?.length && !only.includes(check.id)) continue;
    cases.set(check.id, recordedCase(report, check));
  }
  return cases;
}

/** Where a report's run ran: a command to spawn, an endpoint, or the built-in bridge. */
export type RecordedTarget = { spawn: string } | { endpoint: string } | { builtIn: true };

export function recordedTarget(report: Report): RecordedTarget | undefined {
  const t = report.target;
  if (t.kind !== "bridge") return undefined;
  if (t.command) return { spawn: t.command };
  if (!t.spawned && t.endpoint) return { endpoint: t.endpoint };
  if (t.spawned && t.label?.startsWith("built-in")) return { builtIn: true };
  return undefined;
}

const describeTarget = (t: RecordedTarget): string =>
  "spawn" in t ? `--spawn ${t.spawn}` : "endpoint" in t ? `--endpoint ${t.endpoint}` : "the built-in bridge";

/**
 * The target a re-run of `report` goes to: the one given on the command line (said aloud when it
 * differs from the report's), or else the one the report recorded, never silently another.
 */
export function replayTarget(
  report: Report,
  values: Partial<OptionValues>,
  flag: string,
  say: (line: string) => void,
): Partial<OptionValues> {
  const recorded = recordedTarget(report);
  const given: RecordedTarget | undefined = values.spawn
    ? { spawn: values.spawn }
    : values.endpoint
      ? { endpoint: values.endpoint }
      : undefined;
  if (given) {
    const same = recorded && describeTarget(recorded) === describeTarget(given);
    if (!same)
      say(
        `replaying against ${describeTarget(given)}; the report was of ${recorded ? describeTarget(recorded) : (report.target.label ?? "an unknown target")}`,
      );
    return values;
  }
  if (!recorded)
    throw new UsageError(
      `${flag}: the report does not say how to reach its target (${report.target.label ?? report.target.kind}); give --endpoint or --spawn`,
    );
  say(`replaying against the report's target: ${describeTarget(recorded)}`);
  if ("spawn" in recorded) return { ...values, spawn: recorded.spawn };
  if ("endpoint" in recorded) return { ...values, endpoint: recorded.endpoint };
  return values;
}

/** The command line that runs exactly one case of a check again, on the same target. */
export function replayCommand(
  check: Check,
  finding: Finding,
  values: Partial<OptionValues>,
  endpoint: { host: string; port: number } | undefined,
  o: { tokenEnv: string; timeoutMs: number; runs: number; defaultRuns: number },
): string {
  const fromRepo = process.env.npm_lifecycle_event === "start";
  const parts = [fromRepo ? "npm start --" : "npx aicontrol-conformance"];
  if (endpoint) parts.push(`--endpoint ${formatHostPort(endpoint.host, endpoint.port)}`);
  if (values.spawn) parts.push(`--spawn ${shellQuote(values.spawn)}`);
  if (values.allowRemote) parts.push("--allow-remote");
  if (values.contract) parts.push(`--contract ${shellQuote(values.contract)}`);
  if (o.tokenEnv !== shipped.defaults.tokenEnv) parts.push(`--token-env ${o.tokenEnv}`);
  if (o.timeoutMs !== OPTIONS.timeout.default) parts.push(`--timeout ${o.timeoutMs}ms`);
  // A check's examples may depend on the run count, and with them the path.
  if (o.runs !== o.defaultRuns) parts.push(`--runs ${o.runs}`);
  parts.push(`--check ${check.id}`);
  if (finding.path !== undefined) parts.push(`--seed ${finding.seed} --path ${finding.path}`);
  if (finding.replayPath !== undefined) parts.push(`--replay-path ${shellQuote(finding.replayPath)}`);
  return parts.join(" ");
}

const shellQuote = (s: string) => (/^[\w./:=@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * A finding graded by its recheck: `again` of `ran` tries that reached a verdict reached its verdict again.
 * Seen every time is consistent and seen some of the times flaky, both as found; never seen again, a failure is
 * a warning and a warning (client mode rechecks those that rest on time) a pass, each saying so.
 */
export function graded(finding: Finding, ran: number, again: number): Finding {
  const grade = again === ran ? "consistent" : again > 0 ? "flaky" : "not-reproduced";
  const reproduced = { tries: ran, failed: again, grade } as const;
  if (grade !== "not-reproduced") return { ...finding, reproduced };
  return {
    ...finding,
    verdict: finding.verdict === "fail" ? "warn" : "pass",
    message: `${finding.message} (seen once, not reproduced in ${ran} tries)`,
    reproduced,
  };
}
