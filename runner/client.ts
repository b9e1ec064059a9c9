// Client mode: the tool listens on loopback, starts the client command per case, answers with
// the case's bytes, and judges what the client did.
import type { Contract, RuleId } from "../protocol/contract.js";
import { worst } from "../protocol/verdict.js";
import { fanOut } from "../reports/index.js";
import type { Report, Reporter } from "../reports/types.js";
import { ClientContext, marginMs, Slots } from "../suites/client/context.js";
import {
  BRIDGE_DUTY,
  type ClientCheck,
  clientChecks,
  preflight,
  UNOBSERVED_CLIENT_DUTIES,
} from "../suites/client/index.js";
import type { Finding } from "../suites/harness/check.js";
import { redactor } from "../suites/harness/redact.js";
import { aggregate, type CheckResult, type SkipReason, summarize, toCheckReport } from "./aggregate.js";
import { OPTIONS, PROFILES } from "./cli/options/table.js";
import { graded } from "./replay.js";
import { TOOL } from "./tool.js";

export interface ClientRunOptions {
  contract: Contract;
  /** The client command, with {host}, {port} and {timeout} to substitute. */
  command: string;
  clientTimeoutMs: number;
  seed: number;
  runs: number;
  strict: boolean;
  selected: (rule: RuleId) => boolean;
  env: NodeJS.ProcessEnv;
  reporters: Reporter[];
  log: (line: string) => void;
  signal?: AbortSignal;
  /** Only these checks (by id). */
  onlyChecks?: ReadonlySet<string>;
  /** Exact case to replay: the fast-check path of a property's shrunk failure (with one check in onlyChecks). */
  path?: string;
  /** Clients running at once (default CONCURRENCY). */
  concurrency?: number;
  /** Quieter tries of a failure, and of a warning that rests on time, before it is reported (default: --recheck's). */
  recheck?: number;
}

/**
 * Clients running at once. A client spends much of a case starting up and waiting on the wire, so
 * on two cores six at a time keep both busy without starving the cases that time the client.
 */
export const CONCURRENCY = 6;

/** The target's label when the client command could not be started (as for an unreachable bridge). */
export const UNSTARTED = "unreachable";

/** Whether a client run found a command that could not be started at all (the CLI's exit 3). */
export const clientUnstarted = (report: Report): boolean =>
  report.target.kind === "client" && report.target.label === UNSTARTED;

/**
 * Every case starts the client afresh, which costs far more than a request to a running bridge:
 * a property tries a twentieth of the profile's cases (standard: 5), after its fixed examples.
 */
export const casesPerProperty = (runs: number) => Math.max(1, Math.round(runs / 20));

export async function runClientMode(options: ClientRunOptions): Promise<Report> {
  const started = Date.now();
  const { contract, reporters } = options;
  // The client sends the token in the contract's variable with its auth requests: no transcript or message shows it.
  const redact = redactor(options.env[contract.defaults.tokenEnv]);
  const log = (line: string) => options.log(redact.text(line));
  const runnable = clientChecks.filter((c) => c.rules.some((r) => contract.has(r)));
  const chosen = runnable.filter(
    (c) => c.rules.some(options.selected) && (!options.onlyChecks || options.onlyChecks.has(c.id)),
  );
  const slots = new Slots(options.concurrency ?? CONCURRENCY);
  await fanOut(reporters, "onRunStart", log, {
    target: { label: "client", endpoint: options.command, spawned: true },
    seed: options.seed,
    checks: chosen.length,
    profile: `client (${casesPerProperty(options.runs)} generated cases per property)`,
    strict: options.strict,
  });

  // One root cause, said once: a client that never connects makes every case unjudgeable.
  let preflighted = chosen.length ? await preflight(context(options, slots)) : undefined;
  // A client that ran and did not connect may only have been slow to start on a busy machine: once more, alone.
  if (preflighted && !preflighted.unstartable && (options.recheck ?? OPTIONS.recheck.default) > 0)
    preflighted = await preflight(context(options, new Slots(1)));
  const blocked = preflighted?.problem;
  // A command that never ran is a target that could not be started, not a client that failed.
  if (preflighted?.unstartable) log(`aicontrol-conformance: ${preflighted.problem}`);
  // Independent cases run side by side (each on its own listener); reports follow catalogue order.
  const pending = chosen.map((check) =>
    blocked
      ? Promise.resolve({
          finding: { verdict: "error" as const, message: blocked, reasonKind: "blocked" as const },
          durationMs: 0,
        })
      : runCheck(check, options, slots).then((r) => rechecked(check, options, slots, r)),
  );
  const results: CheckResult[] = [];
  for (const [index, check] of chosen.entries()) {
    const info = { id: check.id, rules: check.rules, description: check.description };
    // A blocked run lists no check: the root cause is said once, in the report's summary.
    if (!blocked) await fanOut(reporters, "onCheckStart", log, info, index, chosen.length);
    const { finding, durationMs } = await pending[index]!;
    let judged = finding;
    if (options.strict && judged.verdict === "warn") {
      judged = { ...judged, verdict: "fail", message: `${judged.message} (a warning; --strict makes it a failure)` };
    }
    const report = redact.deep(
      toCheckReport(check, judged, durationMs, {
        contract,
        replayCommand: (c, f) => replayCommand(c, f, options),
      }),
    );
    results.push({ check: { ...check, run: async () => judged }, finding: judged, report });
    if (!blocked) await fanOut(reporters, "onCheckEnd", log, info, report);
  }

  const rules = aggregate(contract, results, options.selected, (id) => skipReason(id, options, runnable));
  const report: Report = redact.deep({
    schemaVersion: 1,
    tool: TOOL,
    contract: { version: contract.version, sha256: contract.sha256, rules: contract.rules.length },
    target: {
      kind: "client",
      command: options.command,
      spawned: true,
      label: preflighted?.unstartable ? UNSTARTED : "client",
    },
    seed: options.seed,
    runs: options.runs,
    startedAt: new Date(started).toISOString(),
    ...(options.signal?.aborted ? { interrupted: true as const } : {}),
    durationMs: Date.now() - started,
    summary: summarize(rules),
    ...(blocked ? { blocked } : {}),
    rules,
  });
  await fanOut(reporters, "onRunEnd", log, report);
  return report;
}

function skipReason(id: RuleId, o: ClientRunOptions, runnable: readonly ClientCheck[]): ReturnType<SkipReason> {
  if (runnable.some((c) => c.rules.includes(id))) {
    if (!o.selected(id)) return { kind: "not-chosen", text: "not selected (--rules / --skip)" };
    if (o.onlyChecks) return { kind: "not-chosen", text: "not part of this replay" };
    return { kind: "not-run", text: "not run" };
  }
  const unobserved = UNOBSERVED_CLIENT_DUTIES[id];
  return unobserved ? { kind: "not-observable", text: unobserved } : { kind: "bridge-duty", text: BRIDGE_DUTY };
}

async function runCheck(
  check: ClientCheck,
  o: ClientRunOptions,
  slots: Slots,
): Promise<{ finding: Finding; durationMs: number }> {
  const t0 = Date.now();
  const interrupted: Finding = { verdict: "skip", message: "not run: the run was interrupted", reasonKind: "not-run" };
  if (o.signal?.aborted) return { finding: interrupted, durationMs: 0 };
  const ctx = context(o, slots);
  // Cases bound themselves (each kills its client at its deadline); this only catches a harness fault.
  const limitMs = Math.max(120_000, 60 * (o.clientTimeoutMs + marginMs(o.clientTimeoutMs)));
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<Finding>((resolve) => {
    timer = setTimeout(
      () => resolve({ verdict: "error", message: `the check did not finish within ${limitMs} ms` }),
      limitMs,
    );
  });
  let finding: Finding;
  try {
    finding = await Promise.race([check.run(ctx), overrun]);
  } catch (err) {
    finding = { verdict: "error", message: `harness fault: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    clearTimeout(timer);
  }
  // Clients stopped by the interruption prove nothing: an unfinished check has no verdict.
  if (o.signal?.aborted) finding = interrupted;
  return { finding, durationMs: Date.now() - (ctx.firstCaseAt ?? t0) };
}

/**
 * A failure, or a warning that rests on time, tried again on its exact case (seed and path), each try alone:
 * once every other client has ended, and starting none beside it. Graded as bridge mode grades its rechecks, so
 * what a busy moment made and a quieter try does not reproduce is said so, never a plain failure.
 */
async function rechecked(
  check: ClientCheck,
  o: ClientRunOptions,
  slots: Slots,
  first: { finding: Finding; durationMs: number },
): Promise<{ finding: Finding; durationMs: number }> {
  const { finding } = first;
  const tries = o.recheck ?? OPTIONS.recheck.default;
  const worth = finding.verdict === "fail" || (finding.verdict === "warn" && finding.timed);
  if (!worth || tries <= 0) return first;
  const exact = { ...o, seed: finding.seed ?? o.seed, ...(finding.path !== undefined ? { path: finding.path } : {}) };
  let ran = 0;
  let again = 0;
  for (let i = 0; i < tries && !o.signal?.aborted; i++) {
    const { finding: next } = await slots.alone(() => runCheck(check, exact, new Slots(1)));
    if (next.verdict === "error" || next.verdict === "skip") continue;
    ran++;
    if (worst(next.verdict, finding.verdict) === next.verdict) again++;
  }
  if (o.signal?.aborted) return first;
  return { ...first, finding: graded(finding, ran, again) };
}

function context(o: ClientRunOptions, slots: Slots): ClientContext {
  return new ClientContext({
    contract: o.contract,
    command: o.command,
    clientTimeoutMs: o.clientTimeoutMs,
    runs: casesPerProperty(o.runs),
    seed: o.seed,
    path: o.path,
    env: o.env,
    slots,
    signal: o.signal,
  });
}

const shellQuote = (s: string) => (/^[\w./:=@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** Re-runs the failing check's rule against the same client with the same seed. */
function replayCommand(check: ClientCheck, f: Finding, o: ClientRunOptions): string {
  const parts = ["npx aicontrol-conformance client", `--exec ${shellQuote(o.command)}`];
  if (o.clientTimeoutMs !== 1000) parts.push(`--client-timeout ${o.clientTimeoutMs}ms`);
  if (o.runs !== PROFILES.standard) parts.push(`--runs ${o.runs}`);
  parts.push(`--seed ${f.seed ?? o.seed}`, `--rules ${(f.rules ?? check.rules)[0]}`);
  return parts.join(" ");
}
