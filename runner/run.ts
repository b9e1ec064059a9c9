import type { Contract, RuleId } from "../protocol/contract.js";
import { Harness } from "../suites/context.js";
import { preflight, type Blocker } from "../suites/preflight.js";
import { VERDICT_ORDER, worst, type Check, type Finding, type Verdict } from "../suites/check.js";
import { Connection, REDACTED } from "./connection.js";
import type { Target } from "./target.js";
import { baselineSection, type Baseline } from "./baseline.js";
import { TOOL, type CheckReport, type Report, type RuleReport } from "./report.js";

/** One exact case of a check: the seed, and the fast-check path of the shrunk input. */
export interface Case { seed: number; path?: string }

/** Subscribers to a run. Every hook is optional; one that throws is reported and the run goes on. */
export interface Reporter {
  name: string;
  onRunStart?(info: RunInfo): void | Promise<void>;
  onCheckStart?(check: Check, index: number, total: number): void | Promise<void>;
  onCheckEnd?(check: Check, result: CheckReport): void | Promise<void>;
  onRunEnd?(report: Report): void | Promise<void>;
}

/** What a run is about to do; the target's label is redacted like everything a reporter sees. */
export interface RunInfo { target: { label: string; endpoint: string; spawned: boolean }; seed: number; checks: number; profile: string; strict: boolean }

export interface RunOptions {
  contract: Contract;
  checks: readonly Check[];
  /** Undefined when the target could not be reached: every selected check then reports `error`. */
  target: Target | undefined;
  targetInfo: { endpoint: string; spawned: boolean; label: string };
  unreachable?: string;
  token?: string;
  timeoutMs: number;
  checkDeadlineMs: number;
  /** What a slow check may spend before skipping with the reason. */
  timeBudgetMs: number;
  runs: number;
  seed: number;
  profile: string;
  strict: boolean;
  /** Rules selected by --rules/--skip; a check runs when any of its rules is selected. */
  selected: (rule: RuleId) => boolean;
  /** Only these checks (by id), e.g. for a replay. */
  onlyChecks?: Set<string>;
  /** Exact cases (seed and fast-check path) per check: replayed alone, or (corpus) first. */
  cases?: Map<string, Case>;
  /** "replay": a check with a case runs only it; "corpus": the case first, and a fresh run when it is fixed. */
  caseMode?: "replay" | "corpus";
  /** Known failures that do not fail the run (--baseline). */
  baseline?: Baseline;
  replayCommand?: (check: Check, finding: Finding) => string;
  /** Run only shard `index` (1-based) of `count`. */
  shard?: { index: number; count: number };
  /** After the fixed pass, fuzz with fresh seeds until this much time has passed since the start. */
  durationMs?: number;
  /** Interrupts the run (Ctrl-C): the checks left are skipped and the report is still written. */
  signal?: AbortSignal;
  reporters: Reporter[];
  log?: (line: string) => void;
}

export async function run(options: RunOptions): Promise<Report> {
  const started = Date.now();
  const { contract, reporters } = options;
  const log = options.log ?? ((line) => process.stderr.write(line + "\n"));
  type Hook = Exclude<keyof Reporter, "name">;
  const emit = async <K extends Hook>(hook: K, ...args: Parameters<NonNullable<Reporter[K]>>) => {
    for (const reporter of reporters) {
      const fn = reporter[hook] as ((...a: unknown[]) => unknown) | undefined;
      if (typeof fn !== "function") continue;
      try {
        await fn.apply(reporter, args);
      } catch (err) {
        log(`reporter "${reporter.name}" failed in ${hook}: ${(err as Error).message ?? String(err)}`);
      }
    }
  };

  const inShard = shardFilter(options.checks, options.shard);
  const chosen = options.checks.filter((c) => c.rules.some(options.selected) && (!options.onlyChecks || options.onlyChecks.has(c.id)) && inShard(c));
  if (options.target) {
    const target = redactDeep({ label: options.target.label, endpoint: options.target.endpoint, spawned: options.target.spawned }, options.token);
    await emit("onRunStart", { target, seed: options.seed, checks: chosen.length, profile: options.profile, strict: options.strict });
  }
  let blocked: Blocker | undefined = options.target ? await preflightProblem(options) : { problem: `target unreachable: ${options.unreachable ?? "unknown"}`, stillRun: [] };
  const results = new Map<string, { check: Check; finding: Finding; report: CheckReport }>();
  for (const [index, check] of chosen.entries()) {
    await emit("onCheckStart", check, index, chosen.length);
    const t0 = Date.now();
    if (options.signal?.aborted) blocked = INTERRUPTED;
    let finding: Finding = blocked && !blocked.stillRun.includes(check.id) ? { verdict: blocked === INTERRUPTED ? "skip" : "error", message: blocked.problem } : await runWithCase(check, options, log);
    if (!blocked && (finding.verdict === "fail" || finding.verdict === "error")) blocked = await lostTarget(check, options);
    if (options.strict && finding.verdict === "warn") finding = { ...finding, verdict: "fail", message: `${finding.message} (a warning; --strict makes it a failure)` };
    const report = redactDeep(toCheckReport(check, finding, Date.now() - t0, options), options.token);
    results.set(check.id, { check, finding, report });
    await emit("onCheckEnd", check, report);
  }
  if (options.durationMs && !blocked && !options.signal?.aborted) await fuzzUntil(started + options.durationMs, chosen, results, options, log);

  const rules: RuleReport[] = contract.rules.map((rule) => {
    const entries: CheckReport[] = [];
    for (const { check, finding, report } of results.values()) {
      const implicated = finding.rules ?? check.rules;
      if (implicated.includes(rule.id)) {
        entries.push(report);
      } else if (check.rules.includes(rule.id)) {
        // The check stopped at a failure on another rule, so it did not judge this one.
        entries.push({ id: report.id, verdict: "skip", message: `not judged: the check stopped at a failure on ${implicated.join(", ")}`, durationMs: report.durationMs });
      }
    }
    const base = { id: rule.fullId, title: rule.title, group: rule.group, level: rule.level, observed: rule.observed, requirement: rule.requirement };
    // A rule left out by --rules/--skip stays out where a selected check merely passed through it,
    // but a failure found on it is still reported.
    const shown = options.selected(rule.id) || entries.some((e) => e.verdict === "fail" || e.verdict === "error" || e.verdict === "warn");
    if (entries.length && shown) return { ...base, verdict: entries.map((e) => e.verdict).reduce(worst), checks: entries };
    return { ...base, verdict: "skip" as const, reason: skipReason(rule.id, options), checks: [] };
  });

  const summary = summarize(rules);
  const report: Report = {
    schemaVersion: 1, tool: TOOL,
    target: { endpoint: options.targetInfo.endpoint, spawned: options.targetInfo.spawned, label: options.targetInfo.label },
    seed: options.seed, startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, summary, rules,
  };
  if (options.baseline) report.baseline = baselineSection(report, options.baseline, contract.prefix);
  const redacted = redactDeep(report, options.token);
  await emit("onRunEnd", redacted);
  return redacted;

  function skipReason(id: RuleId, o: RunOptions): string {
    const rule = contract.rule(id);
    if (rule.observed !== "wire") return rule.reason!;
    if (!o.selected(id)) return "not selected (--rules / --skip)";
    if (o.onlyChecks) return "not part of this replay";
    if (o.shard && options.checks.some((c) => c.rules.includes(id))) return `${SHARD_REASON} (--shard ${o.shard.index}/${o.shard.count})`;
    return "no check yet";
  }
}

export const SHARD_REASON = "checked in another shard";
const INTERRUPTED: Blocker = { problem: "not run: the run was interrupted", stillRun: [] };

export function summarize(rules: RuleReport[]): Record<Verdict, number> {
  return Object.fromEntries(VERDICT_ORDER.map((v) => [v, rules.filter((r) => r.verdict === v).length])) as Record<Verdict, number>;
}

/** Shard I of N: every Nth check in ID order, so shards are disjoint, complete and stable across runs. */
function shardFilter(checks: readonly Check[], shard: RunOptions["shard"]): (check: Check) => boolean {
  if (!shard) return () => true;
  const order = [...checks].map((c) => c.id).sort();
  return (check) => order.indexOf(check.id) % shard.count === shard.index - 1;
}

/** Time-boxed fuzzing after the fixed pass: every check again with fresh seeds until the deadline; the worst finding stays. */
async function fuzzUntil(end: number, checks: Check[], results: Map<string, { check: Check; finding: Finding; report: CheckReport }>, o: RunOptions, log: (line: string) => void): Promise<void> {
  let round = 0;
  let lastLog = Date.now();
  let lastFailing = [...results.values()].filter((r) => r.finding.verdict === "fail").length;
  while (Date.now() < end - 1000 && !o.signal?.aborted) {
    round++;
    for (const check of checks) {
      const left = end - Date.now();
      if (left < 1000 || o.signal?.aborted) break;
      const seed = (o.seed + round * 7919) | 0;
      const finding = await runCheck(check, { ...o, seed, checkDeadlineMs: Math.min(o.checkDeadlineMs, left) });
      const known = results.get(check.id)!;
      // Only what the bridge did counts here: a check the deadline cut short proves nothing.
      const bridgeFault = finding.verdict === "fail" || finding.verdict === "warn";
      if (bridgeFault && VERDICT_ORDER.indexOf(finding.verdict) < VERDICT_ORDER.indexOf(known.finding.verdict)) {
        const report = redactDeep(toCheckReport(check, { seed, ...finding }, 0, { ...o, seed }), o.token);
        results.set(check.id, { check, finding, report });
      }
    }
    const failing = [...results.values()].filter((r) => r.finding.verdict === "fail").length;
    // A progress line now and then (and when something new fails), not one per round.
    if (Date.now() - lastLog >= 5000 || failing !== lastFailing || Date.now() >= end - 1000) {
      log(`fuzzing: round ${round} done, ${failing} failing checks, ${Math.max(0, Math.round((end - Date.now()) / 1000))} s left`);
      lastLog = Date.now();
      lastFailing = failing;
    }
  }
}

/** Why no check can reach a verdict (a token is missing, the bridge answers nothing), or undefined. */
async function preflightProblem(o: RunOptions): Promise<Blocker | undefined> {
  let blocker: Blocker | undefined;
  const finding = await runCheck({ id: "preflight", rules: [], description: "", requirement: "", run: async (ctx) => {
    blocker = await preflight(ctx);
    return { verdict: "pass", message: "ready" };
  } }, o);
  if (finding.verdict === "fail" && /stopped accepting connections/.test(finding.message)) return { problem: finding.message, stillRun: [] };
  return blocker;
}

/** After a failing check: is the bridge still there? Restart one this tool owns; otherwise stop judging. */
async function lostTarget(check: Check, o: RunOptions): Promise<Blocker | undefined> {
  const target = o.target!;
  try {
    (await Connection.open(target.host, target.port, { maxLineBytes: 1, connectTimeoutMs: o.timeoutMs, record: false })).close();
    return undefined;
  } catch {
    if (target.restart) {
      try { await target.restart(); return undefined; } catch (err) {
        return { problem: `the bridge stopped during ${check.id} and could not be restarted: ${(err as Error).message}`, stillRun: [] };
      }
    }
    return { problem: `the bridge stopped accepting connections during ${check.id}, so nothing after it can be judged`, stillRun: [] };
  }
}

/** A check, with its saved or replayed case where there is one. */
async function runWithCase(check: Check, o: RunOptions, log: (line: string) => void): Promise<Finding> {
  const saved = o.cases?.get(check.id);
  if (!saved) return runCheck(check, o);
  const finding = await runCheck(check, o, saved);
  if (o.caseMode !== "corpus") return finding;
  const still = finding.verdict === "fail";
  log(`corpus: ${still ? "STILL FAILING" : "FIXED"} ${check.id}`);
  return still ? finding : runCheck(check, o);
}

async function runCheck(check: Check, o: RunOptions, exact?: Case): Promise<Finding> {
  const deadline = Date.now() + o.checkDeadlineMs;
  const harness = new Harness({
    contract: o.contract, endpoint: o.target!, token: o.token, timeoutMs: o.timeoutMs, runs: o.runs, timeBudgetMs: o.timeBudgetMs,
    seed: exact?.seed ?? o.seed, path: exact?.path, deadline,
  });
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<Finding>((resolve) => {
    timer = setTimeout(() => resolve({ verdict: "error", message: `the check did not finish within its deadline of ${o.checkDeadlineMs} ms` }), o.checkDeadlineMs + o.timeoutMs);
  });
  try {
    return await Promise.race([harness.runCase(() => check.run(harness)), overrun]);
  } finally {
    clearTimeout(timer);
    harness.stop();
  }
}

function toCheckReport(check: Check, f: Finding, durationMs: number, o: RunOptions): CheckReport {
  const report: CheckReport = { id: check.id, verdict: f.verdict, message: f.message, description: check.description, requirement: check.requirement, durationMs };
  if (f.expected !== undefined) report.expected = f.expected;
  if (f.actual !== undefined) report.actual = f.actual;
  if (f.counterexample !== undefined) report.counterexample = f.counterexample;
  if (f.seed !== undefined) report.seed = f.seed;
  if (f.path !== undefined) report.path = f.path;
  if ((f.verdict === "fail" || f.verdict === "warn") && o.replayCommand) report.replay = o.replayCommand(check, f);
  if (f.transcript && f.verdict !== "pass") report.transcript = f.transcript;
  return report;
}

/** Replaces the token wherever it appears in a value (messages, bridge output, transcripts); idempotent. */
export function redactDeep<T>(value: T, token: string | undefined): T {
  if (!token) return value;
  const forms = [...new Set([token, JSON.stringify(token).slice(1, -1)])].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(forms.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
  const scrub = (text: string) => text.replace(pattern, REDACTED);
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return v.split(REDACTED).map(scrub).join(REDACTED);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}
