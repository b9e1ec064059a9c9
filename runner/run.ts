// The scheduler: preflight, every selected check in order, lost-target detection, fuzzing
// until a deadline, then one report. It knows no rule semantics: checks judge, it collects.
import { readFileSync } from "node:fs";
import type { Contract, RuleId } from "../protocol/contract.js";
import { fanOut } from "../reports/index.js";
import type { CheckInfo, Report, Reporter } from "../reports/types.js";
import type { CanaryMemory } from "../suites/harness/canary.js";
import { type Check, CommandLedger, dealKey, type Finding } from "../suites/harness/check.js";
import { WireStats } from "../suites/harness/connection.js";
import type { Blocked } from "../suites/harness/preflight.js";
import { redactor } from "../suites/harness/redact.js";
import { aggregate, type CheckResult, summarize, toCheckReport, UNCOVERED } from "./aggregate.js";
import type { Case } from "./attempt.js";
import { type Baseline, baselineSection } from "./baseline.js";
import { RunCoverage } from "./coverage.js";
import { fuzzUntil } from "./fuzz.js";
import {
  diagnose,
  diagnosisId,
  inconclusive,
  lostTarget,
  PREFLIGHT,
  preflightProblem,
  probeConcurrency,
} from "./health.js";
import { type CaseMode, recheck, runWithCase } from "./replay.js";
import type { Target } from "./targets.js";
import { TOOL } from "./tool.js";

export interface RunOptions {
  contract: Contract;
  checks: readonly Check[];
  /** Undefined when the target could not be reached: every selected rule then reports `error`. */
  target: Target | undefined;
  targetInfo: { endpoint: string; spawned: boolean; label: string; command?: string };
  unreachable?: string;
  token?: string;
  tokenEnv: string;
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
  /** How the cases are used: only them (a replay), or first (the corpus, --last-failed). */
  caseMode?: CaseMode;
  /** With caseMode "last-failed": after the run's seed, the checks run once more with this one (fresh cases). */
  freshSeed?: number;
  /** Known failures that do not fail the run (--baseline). */
  baseline?: Baseline;
  replayCommand?: (check: Check, finding: Finding) => string;
  /** Run only shard `index` (1-based) of `count`. */
  shard?: { index: number; count: number };
  /** After the fixed pass, fuzz with fresh seeds until this much time has passed since the start. */
  durationMs?: number;
  /** Stop after this many failing checks (--bail, --max-failures): the rest are skipped. */
  maxFailures?: number;
  /** The flag that set maxFailures (--bail, --max-failures N), named when the run stops there. */
  stopFlag?: string;
  /**
   * Checks that share no bridge state run this many at a time (1: one after another). A
   * failure found beside others is judged again alone.
   */
  concurrency?: number;
  /** Whether the bridge serves a second connection while one is open (set by the run from its probe). */
  concurrentConnections?: boolean;
  /** Where the run counts what crosses the wire (set by the run). */
  stats?: WireStats;
  /** The run's account of accepted and completed commands (set by the run). */
  ledger?: CommandLedger;
  /** State cells not reached yet, for the checks to aim at (set by --duration's rounds). */
  unreached?: readonly string[];
  /** Re-send a failing check's minimal case this many times to grade it (0: off). */
  recheck?: number;
  /** Checks of these rules run before the others. */
  first?: ReadonlySet<RuleId>;
  /** Interrupts the run (Ctrl-C): the checks left are skipped and the report is still written. */
  signal?: AbortSignal;
  reporters: Reporter[];
  log?: (line: string) => void;
}

export const SHARD_REASON = "checked in another shard";
/** Checks at a time against a bridge this tool owns and that serves several connections. */
const DEFAULT_CONCURRENCY = 4;
export const NOT_SELECTED = "not selected (--rules / --skip)";

export async function run(options: RunOptions): Promise<Report> {
  const started = Date.now();
  const { contract, reporters } = options;
  const redact = redactor(options.token);
  // Everything logged passes the redaction: a bridge's stderr or a reporter's error may carry the token.
  const write = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  const log = (line: string) => write(redact.text(line));
  const runnable = options.checks.filter((c) => c.rules.some((r) => contract.has(r)));
  const wanted = runnable.filter(
    (c) => c.rules.some(options.selected) && (!options.onlyChecks || options.onlyChecks.has(c.id)),
  );
  // Every shard deals the same selection the same way.
  const dealt = wanted.filter(shardFilter(wanted, options.shard));
  const chosen = options.target?.restart ? historyLate(dealt) : dealt;
  // Rules that failed last time go first (watch mode), in their usual order.
  if (options.first?.size) {
    const early = (c: Check) => c.rules.some((r) => options.first!.has(r));
    chosen.sort((a, b) => Number(early(b)) - Number(early(a)));
  }

  const blocked: Blocked | undefined = options.target
    ? await preflightProblem(options)
    : { kind: "unreachable", problem: `target unreachable: ${options.unreachable ?? "unknown"}`, stillRun: [] };
  const parallel = options.target && !blocked ? await probeConcurrency(options) : undefined;
  const stats = new WireStats();
  const ledger = new CommandLedger();
  const coverage = new RunCoverage();
  let fuzzed: { rounds: number; checks: number } | undefined;
  const results = new Map<string, CheckResult>();
  let stopped: Report["stopped"];
  const exits: NonNullable<Report["targetExits"]> = [];
  if (blocked && blocked.stillRun.length === 0) {
    // One root cause, said once: no check can reach a verdict, so none is run or listed.
    for (const check of chosen) {
      const finding: Finding = { verdict: "error", message: blocked.problem };
      results.set(check.id, { check, finding, report: redact.deep(toCheckReport(check, finding, 0, options)) });
    }
  } else {
    const target = redact.deep({
      label: options.target!.label,
      endpoint: options.target!.endpoint,
      spawned: options.target!.spawned,
    });
    await fanOut(reporters, "onRunStart", log, {
      target,
      seed: options.seed,
      checks: chosen.length,
      profile: options.profile,
      strict: options.strict,
    });
    // Every check learns what the probe found about second connections.
    const probed: RunOptions = { ...options, concurrentConnections: parallel, stats, ledger };
    let stop: { problem: string; interrupted?: boolean } | undefined = blocked;
    let failures = 0;
    let begun = 0;
    const begin = async (check: Check): Promise<CheckInfo> => {
      const info = { id: check.id, rules: check.rules, description: check.description };
      await fanOut(reporters, "onCheckStart", log, info, begun++, chosen.length);
      return info;
    };
    const record = async (check: Check, found: Finding, t0: number, info: CheckInfo) => {
      let finding = found;
      if (options.strict && finding.verdict === "warn") {
        finding = {
          ...finding,
          verdict: "fail",
          message: `${finding.message} (a warning; --strict makes it a failure)`,
        };
      }
      if (finding.verdict === "fail") failures++;
      coverage.add(check, found);
      // Reporters tell of it once, with the root causes, at the end.
      const exit = options.target?.takeExit?.();
      if (exit) exits.push({ check: check.id, ...exit });
      const report = redact.deep(toCheckReport(check, finding, Date.now() - t0, options));
      results.set(check.id, { check, finding, report });
      await fanOut(reporters, "onCheckEnd", log, info, report);
    };
    /** Why a check is not run now, or undefined. */
    const withheld = (check: Check): Finding | undefined => {
      if (options.signal?.aborted) stop = { problem: "not run: the run was interrupted", interrupted: true };
      if (!stop && options.maxFailures && failures >= options.maxFailures) {
        stop = {
          problem: `not run: stopped after ${failures === 1 ? "the first failure" : `${failures} failures`} (${options.stopFlag ?? "--max-failures"})`,
          interrupted: true,
        };
      }
      if (stop && !blocked?.stillRun.includes(check.id))
        return { verdict: stop.interrupted ? "skip" : "error", message: stop.problem };
      if (stopped && check.needs?.includes(stopped.duty as "completions"))
        return { verdict: "error", message: inconclusive(stopped) };
      return undefined;
    };
    const memory: CanaryMemory = {};
    /**
     * What the canary found, at `at` (before the first check, or after a failing check): faults on
     * their own rules, recorded once each, and what stopped.
     */
    const diagnosed = async (at: string) => {
      const found = await diagnose(at, probed, memory);
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
        const info = { id: check.id, rules: check.rules, description: check.description };
        if (!results.has(check.id)) await record(check, finding, Date.now(), info);
      }
      if (found.problem) stop = { problem: found.problem };
      else if (found.stopped) stopped = found.stopped;
    };
    /**
     * After a failure: is the bridge still there (restarted where owned), and does it still serve? A
     * bridge started afresh since the failure holds nothing the check left: the canary would find
     * there only what it found before the first check, on a bridge just as fresh.
     */
    const afterFailure = async (check: Check) => {
      stop = await lostTarget(check, probed);
      if (!stop && !stopped && !options.target?.fresh) await diagnosed(check.id);
    };
    // A bridge broken before the run is named as such, not after whichever check comes first.
    if (!stop) await diagnosed(PREFLIGHT);
    /** One check alone on the bridge: a failure is followed by the canary and rechecked. */
    const serial = async (check: Check, begunAs?: CheckInfo) => {
      const info = begunAs ?? (await begin(check));
      const t0 = Date.now();
      let finding = withheld(check) ?? (await runWithCase(check, probed, log));
      if (!stop && (finding.verdict === "fail" || finding.verdict === "error")) {
        await afterFailure(check);
        // A bridge the failure left unable to serve cannot show whether the failure repeats.
        if (finding.verdict === "fail" && !stop && !(stopped && check.needs?.length)) {
          finding = await recheck(check, finding, probed);
          if (finding.reproduced?.failed) await afterFailure(check);
        }
      }
      await record(check, finding, t0, info);
    };
    /** The check that fills the history, where it runs beside the checks without needs (see historyLate). */
    const filler = options.target?.restart ? chosen.find((c) => c.state) : undefined;
    /**
     * Checks that share no bridge state, several at a time. What one of them did to the bridge
     * must not be blamed on another: a check that failed, or that overlapped a restart, is run
     * again alone, and that run is its verdict.
     */
    const pooled = async (group: Check[]) => {
      const again = new Map<Check, CheckInfo>();
      let next = 0;
      const worker = async () => {
        for (let check = group[next++]; check; check = group[next++]) {
          const early = withheld(check);
          if (early) {
            await record(check, early, Date.now(), await begin(check));
            continue;
          }
          const restarts = options.target!.restarts;
          const info = await begin(check);
          const t0 = Date.now();
          const finding = await runWithCase(check, probed, log);
          // A bridge that exited beside this check may have been killed by another: judged alone again.
          const overlapped = options.target!.restarts !== restarts || options.target!.exited?.();
          // The history's filler reaches any other verdict than a pass alone: its pace, read beside the others, may
          // be too slow for the budget where alone it is not.
          const alone = finding.verdict === "fail" || finding.verdict === "error" || overlapped;
          if (alone || (check === filler && finding.verdict !== "pass")) again.set(check, info);
          else await record(check, finding, t0, info);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, group.length) }, worker));
      // An exit during the pool belongs to the check that brings it about alone, not to whichever
      // check ends first after it: held back while they run again, and kept if none repeats it.
      const pooledExit = options.target?.takeExit?.();
      const reported = exits.length;
      const rerun = group.filter((check) => again.has(check));
      for (const check of rerun) await serial(check, again.get(check));
      if (pooledExit && exits.length === reported) {
        const blamed =
          rerun.find((c) => ["fail", "error"].includes(results.get(c.id)?.finding.verdict ?? "")) ?? rerun[0];
        exits.push({ check: blamed?.id ?? group[0]!.id, ...pooledExit });
      }
    };

    // Several at a time only where the bridge serves a second connection; by default only where
    // this tool owns the bridge, so a failure found beside others can be judged again on a fresh one.
    const concurrency = parallel ? (options.concurrency ?? (options.target!.restart ? DEFAULT_CONCURRENCY : 1)) : 1;
    for (let i = 0; i < chosen.length; ) {
      // A stretch of checks that need no shared bridge state (queue, history) may share the bridge, and where the
      // bridge can be started afresh, with the check that fills the history (see historyLate).
      let end = i + 1;
      const leads = !chosen[i]!.needs?.length || chosen[i] === filler;
      if (concurrency > 1 && leads) while (end < chosen.length && !chosen[end]!.needs?.length) end++;
      if (end - i > 1) await pooled(chosen.slice(i, end));
      else await serial(chosen[i]!);
      i = end;
    }
    if (options.durationMs && !stop && !options.signal?.aborted) {
      fuzzed = await fuzzUntil(started + options.durationMs, chosen, results, options, log, coverage);
    }
  }

  const rules = aggregate(contract, results.values(), options.selected, (id) => skipReason(id, options, runnable));
  const report: Report = {
    schemaVersion: 1,
    tool: TOOL,
    contract: { version: contract.version, sha256: contract.sha256, rules: contract.rules.length },
    target: { kind: "bridge", ...options.targetInfo },
    seed: options.seed,
    runs: options.runs,
    ...(options.shard ? { shard: options.shard } : {}),
    startedAt: new Date(started).toISOString(),
    ...(options.signal?.aborted ? { interrupted: true as const } : {}),
    durationMs: Date.now() - started,
    summary: summarize(rules),
    ...(blocked && blocked.stillRun.length === 0 ? { blocked: blocked.problem } : {}),
    ...(stopped ? { stopped } : {}),
    ...(exits.length ? { targetExits: exits } : {}),
    ...(coverage.report() ? { stateCoverage: coverage.report() } : {}),
    ...(fuzzed ? { fuzz: { durationMs: options.durationMs!, ...fuzzed } } : {}),
    wire: {
      lines: stats.lines,
      bytesSent: stats.bytesSent,
      bytesReceived: stats.bytesReceived,
      waitingMs: Math.round(stats.waitingMs),
    },
    time: {
      restartsMs: options.target?.restartMs ?? 0,
      shrinkingMs: stats.shrinkingMs,
      recheckingMs: stats.recheckingMs,
      completionsMs: ledger.waitedMs,
      completionWaitMs: ledger.completionWaitMs(options.timeoutMs),
      slowestStepMs: ledger.slowestStepMs,
    },
    rules,
  };
  if (options.baseline) report.baseline = baselineSection(report, options.baseline, contract.prefix);
  const redacted = redact.deep(report);
  await fanOut(reporters, "onRunEnd", log, redacted);
  return redacted;
}

function skipReason(id: RuleId, o: RunOptions, runnable: readonly Check[]): string {
  const rule = o.contract.rule(id);
  if (rule.observed === "wire" && !runnable.some((c) => c.rules.includes(id))) return UNCOVERED;
  if (!o.selected(id)) return NOT_SELECTED;
  if (o.onlyChecks)
    return o.caseMode === "replay" ? "not part of this replay" : "not covered by the chosen checks (--check)";
  if (rule.observed !== "wire") return rule.reason ?? `observed ${rule.observed}`;
  if (o.shard) return `${SHARD_REASON} (--shard ${o.shard.index}/${o.shard.count})`;
  return "not run";
}

/**
 * Where this tool can start the bridge afresh, the order that fills a long history once. Every check that acts goes
 * first, in the catalogue's order, so the events it makes count toward the history the checks of a shared state
 * (Check.state) need: a bridge that completes one command a game tick fills it once, mostly with commands judged
 * anyway. The first of those checks tops the history up beside the checks that need nothing of the queue or the
 * history, which would otherwise run while the game loop idles; a failure beside them is judged again alone, as in
 * any pool. The checks that take the history over (Check.takesOver) come last. A check that stops the game loop
 * before them is followed by a fresh bridge, so they still reach a verdict. At an endpoint every check keeps its
 * place, the history checks ahead of those that may stop the loop for good.
 */
export function historyLate(checks: readonly Check[]): Check[] {
  const makers = checks.filter((c) => c.state);
  if (!makers.length) return [...checks];
  const rest = checks.filter((c) => !c.state && !c.takesOver);
  return [
    ...rest.filter((c) => c.needs?.length),
    makers[0]!,
    ...rest.filter((c) => !c.needs?.length),
    ...makers.slice(1),
    ...checks.filter((c) => c.takesOver && !c.state),
  ];
}

/**
 * Shard I of N, dealt by measured cost (runner/check-costs.json, written by `npm run bench`):
 * the costliest first, each to the shard with the least so far. Checks that share a costly
 * bridge state (Check.state) are dealt as one, so the shard that makes it serves them all, as a
 * whole run does. The deal depends only on the checks and the table, so shards are disjoint,
 * complete and alike in every job.
 */
function shardFilter(checks: readonly Check[], shard: RunOptions["shard"]): (check: Check) => boolean {
  if (!shard) return () => true;
  const cost = checkCosts(checks);
  const units = new Map<string, { ids: string[]; cost: number }>();
  for (const check of checks) {
    const key = dealKey(check);
    const unit = units.get(key) ?? units.set(key, { ids: [], cost: 0 }).get(key)!;
    unit.ids.push(check.id);
    unit.cost += cost(check);
  }
  const load = new Array<number>(shard.count).fill(0);
  const mine = new Set<string>();
  const dealt = [...units.values()].sort((a, b) => b.cost - a.cost || a.ids[0]!.localeCompare(b.ids[0]!));
  for (const unit of dealt) {
    const lightest = load.indexOf(Math.min(...load));
    load[lightest]! += unit.cost;
    if (lightest === shard.index - 1) for (const id of unit.ids) mine.add(id);
  }
  return (check) => mine.has(check.id);
}

/**
 * What each check adds to its shard's time, in ms: its measured cost, and for a check that runs
 * in a pool beside others (one without `needs`), that cost divided by how much a shard's pool
 * overlaps its checks (the table's `pooledSpeedup`). A check the table does not know costs what
 * the median one does; without a table every check costs the same, and shards are dealt by count.
 */
function checkCosts(checks: readonly Check[]): (check: Check) => number {
  let table: { costs?: Record<string, number>; pooledSpeedup?: number } = {};
  try {
    table = JSON.parse(readFileSync(new URL("./check-costs.json", import.meta.url), "utf8")) as typeof table;
  } catch {
    /* no table */
  }
  const costs = table.costs ?? {};
  const speedup = typeof table.pooledSpeedup === "number" && table.pooledSpeedup >= 1 ? table.pooledSpeedup : 1;
  const known = checks.map((c) => costs[c.id]).filter((v): v is number => typeof v === "number" && v >= 0);
  const median = known.length ? [...known].sort((a, b) => a - b)[Math.floor(known.length / 2)]! : 1;
  return (check) => (costs[check.id] ?? median) / (check.needs?.length ? 1 : speedup);
}
