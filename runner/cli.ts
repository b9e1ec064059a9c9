#!/usr/bin/env node
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { contract as shippedContract, type Contract } from "../protocol/contract.js";
import { allChecks } from "../suites/index.js";
import { worst, type Check, type Finding } from "../suites/check.js";
import { consoleReporter } from "../reports/console.js";
import { jsonReporter } from "../reports/json.js";
import { junitReporter } from "../reports/junit.js";
import { htmlReporter } from "../reports/html.js";
import { markdownReporter } from "../reports/markdown.js";
import { parseOptions, ruleSelector, TIME_BUDGET, UsageError, USAGE, type Options } from "./options.js";
import { run, redactDeep, type Case, type Reporter } from "./run.js";
import { embeddedTarget, endpointTarget, isLoopback, spawnTarget, TargetError, type Target } from "./target.js";
import { formatHostPort } from "./connection.js";
import { TOOL, type CheckReport, type Report } from "./report.js";
import { mergeReports } from "./merge.js";
import { applyBaseline, baselineSection, loadBaseline, type Baseline } from "./baseline.js";
import { compareReports, formatChanges } from "./compare.js";
import { loadCorpus, saveFailures } from "./corpus.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** A live progress line (a terminal). */
  live?: boolean;
}

const processIo: Io = {
  out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t), env: process.env,
  live: Boolean(process.stdout.isTTY) && !process.env.CI,
};

/** The whole command line: returns the exit code (0 pass, 1 a rule failed, 2 usage, 3 target unreachable). */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  return (await runCli(argv, io)).code;
}

/** The command line, also returning the report (for the programmatic API). */
export async function runCli(argv: string[], io: Io = processIo): Promise<{ code: number; report?: Report }> {
  const contract = shippedContract;
  let options: Options;
  let baseline: Baseline | undefined;
  try {
    options = parseOptions(argv, contract);
    if (options.baseline) baseline = loadBaseline(options.baseline, contract, allChecks);
  } catch (err) {
    if (err instanceof UsageError) return usage(io, err.message);
    throw err;
  }
  if (options.help) { io.out(USAGE + "\n"); return { code: 0 }; }
  if (options.version) { io.out(`${TOOL.name} ${TOOL.version}\n`); return { code: 0 }; }
  if (options.list) { io.out(listRules(contract)); return { code: 0 }; }

  let previous: Report | undefined;
  let cases = new Map<string, Case>();
  let onlyChecks = options.check?.length ? new Set(options.check) : undefined;
  try {
    if (options.compare) previous = readReportFile(options.compare[0]!, "--compare");
    if (options.compare?.[1]) return compareOnly(previous!, readReportFile(options.compare[1], "--compare"), options.compare, io);
    if (options.merge) return mergeOnly(options.merge.map((f) => readReportFile(f, "--merge")), contract, options, baseline, previous, io);
    if (options.replay) ({ cases, onlyChecks } = replayCases(readReportFile(options.replay, "--replay"), options));
    else if (options.path) cases.set(options.check![0]!, { seed: options.seed, path: options.path });
    else if (options.saveFailures) cases = new Map(loadCorpus(options.saveFailures).filter((c) => c.seed !== undefined).map((c) => [c.check, { seed: c.seed!, path: c.path }]));
  } catch (err) {
    return usage(io, (err as Error).message);
  }
  const unknown = [...(onlyChecks ?? [])].filter((id) => !allChecks.some((c) => c.id === id));
  if (unknown.length) return usage(io, `no check named ${unknown.join(", ")}; --list shows them all`);
  for (const file of [options.json, options.junit, options.html, options.markdown]) {
    if (!file) continue;
    try { mkdirSync(dirname(resolve(file)), { recursive: true }); } catch (err) {
      return usage(io, `cannot write ${file}: ${(err as NodeJS.ErrnoException).code}`);
    }
  }

  const builtIn = !options.endpoint && !options.spawn;
  // The built-in bridge gets a token of its own, so a plain `npm start` exercises authorization too.
  const token = io.env[options.tokenEnv] || (builtIn ? randomBytes(12).toString("hex") : undefined);
  if (token && token.length < 8 && !builtIn) {
    io.err(`aicontrol-conformance: note: the token in ${options.tokenEnv} is under 8 characters; it is still redacted everywhere, which may hide ordinary text too\n`);
  }
  let target: Target | undefined;
  let unreachable: string | undefined;
  try {
    target = await startTarget(options, io.env, token);
  } catch (err) {
    if (err instanceof UsageError) return usage(io, err.message);
    if (!(err instanceof TargetError)) throw err;
    unreachable = redactDeep(err.message, token);
    io.err(`aicontrol-conformance: target unreachable: ${unreachable}\n`);
  }
  // Ctrl-C: finish the check under way, skip the rest, write every report, then exit 130.
  const interrupt = new AbortController();
  const stop = () => {
    io.err("aicontrol-conformance: interrupted; writing the report of what ran (press again to quit at once)\n");
    interrupt.abort();
    process.on("SIGINT", () => process.exit(130));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);

  const reporters = outputReporters(options, io);
  if (options.replay || options.path) reporters.push(replayVerdicts(io, onlyChecks));

  const targetInfo = target
    ? { endpoint: target.endpoint, spawned: target.spawned, label: target.label }
    : { endpoint: options.endpoint ? formatHostPort(options.endpoint.host, options.endpoint.port) : options.spawn ? `spawn: ${options.spawn}` : "built-in", spawned: !options.endpoint, label: "unreachable" };
  let report: Report;
  try {
    report = await run({
      contract, checks: allChecks, target, targetInfo, unreachable, token,
      timeoutMs: options.timeoutMs,
      checkDeadlineMs: Math.max(30_000, options.timeoutMs * 15, options.runs * 100),
      timeBudgetMs: TIME_BUDGET[options.profile],
      runs: options.runs, seed: options.seed, profile: options.profile, strict: options.strict,
      selected: ruleSelector(options, contract), onlyChecks,
      cases, caseMode: options.replay || options.path ? "replay" : "corpus", baseline,
      replayCommand: (check, finding) => replayCommand(check, finding, options),
      shard: options.shard, durationMs: options.durationMs, signal: interrupt.signal,
      reporters,
      log: (line) => io.err(line + "\n"),
    });
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await target?.stop();
  }
  if (options.saveFailures) {
    const saved = saveFailures(options.saveFailures, report);
    if (saved) io.err(`aicontrol-conformance: saved ${saved} failing case${saved === 1 ? "" : "s"} to ${options.saveFailures}\n`);
  }
  if (previous) io.out(formatChanges(compareReports(previous, report), options.compare![0]!));
  if (unreachable) return { code: 3, report };
  if (interrupt.signal.aborted) return { code: 130, report };
  return { code: verdictCode(report, baseline, contract, io), report };
}

function usage(io: Io, message: string): { code: number } {
  io.err(`aicontrol-conformance: ${message}\nRun with --help for usage.\n`);
  return { code: 2 };
}

/** 1 when a rule failed or could not be judged (beyond what the baseline accepts), or a baseline entry is stale. */
function verdictCode(report: Report, baseline: Baseline | undefined, contract: Contract, io: Io): number {
  if (!baseline) return report.summary.fail + report.summary.error > 0 ? 1 : 0;
  const { known, stale, unexpected } = applyBaseline(report, baseline, contract.prefix);
  io.out(`baseline ${baseline.file}: ${known.length} known failure${known.length === 1 ? "" : "s"} accepted, ${unexpected.length} new, ${stale.length} stale\n`);
  for (const e of stale) io.out(`  STALE ${e.id}: it passes now, so remove it from the baseline (it said: ${e.reason})\n`);
  for (const id of unexpected) io.out(`  NEW   ${id}\n`);
  return unexpected.length + stale.length > 0 ? 1 : 0;
}

/** --compare OLD NEW: the verdict changes alone; 1 when a rule regressed. */
function compareOnly(before: Report, after: Report, files: string[], io: Io): { code: number } {
  const changes = compareReports(before, after);
  io.out(formatChanges(changes, files[0]!));
  return { code: changes.some((c) => c.worse) ? 1 : 0 };
}

/** Reads a JSON report written by this tool. */
function readReportFile(file: string, flag: string): Report {
  let report: Report;
  try {
    report = JSON.parse(readFileSync(file, "utf8")) as Report;
  } catch (err) {
    throw new Error(`cannot read ${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (report?.schemaVersion !== 1 || !Array.isArray(report.rules)) throw new Error(`${flag} ${file} is not an aicontrol-conformance JSON report (schemaVersion 1)`);
  return report;
}

/** --merge: one report from shard reports, through the same reporters as a run. */
async function mergeOnly(reports: Report[], contract: Contract, options: Options, baseline: Baseline | undefined, previous: Report | undefined, io: Io): Promise<{ code: number; report: Report }> {
  const merged = mergeReports(reports);
  if (baseline) merged.baseline = baselineSection(merged, baseline, contract.prefix);
  for (const reporter of outputReporters(options, io)) {
    try { await reporter.onRunEnd?.(merged); } catch (err) { io.err(`reporter "${reporter.name}" failed: ${(err as Error).message}\n`); }
  }
  if (previous) io.out(formatChanges(compareReports(previous, merged), options.compare![0]!));
  return { code: verdictCode(merged, baseline, contract, io), report: merged };
}

async function startTarget(options: Options, env: NodeJS.ProcessEnv, token: string | undefined): Promise<Target> {
  if (options.endpoint) return endpointTarget(options.endpoint.host, options.endpoint.port, options.timeoutMs);
  if (options.spawn) {
    const target = await spawnTarget(options.spawn, { startTimeoutMs: options.startTimeoutMs, env });
    if (!isLoopback(target.host) && !options.allowRemote) {
      await target.stop();
      throw new UsageError(`the spawned bridge listens on ${target.host}, which is not loopback: pass --allow-remote to test it on purpose`);
    }
    return target;
  }
  return embeddedTarget(() => new ReferenceBridge({ token }));
}

/** The console and every report file asked for. */
function outputReporters(options: Options, io: Io): Reporter[] {
  const reporters: Reporter[] = [consoleReporter({ write: io.out, verbose: options.verbose, live: io.live ?? false })];
  if (options.json) reporters.push(jsonReporter(options.json));
  if (options.junit) reporters.push(junitReporter(options.junit));
  if (options.html) reporters.push(htmlReporter(options.html));
  if (options.markdown || io.env.GITHUB_STEP_SUMMARY) reporters.push(markdownReporter(options.markdown, io.env));
  return reporters;
}

function replayCommand(check: Check, finding: Finding, o: Options): string {
  const fromRepo = process.env.npm_lifecycle_event === "start";
  const parts = [fromRepo ? "npm start --" : "npx aicontrol-conformance"];
  if (o.endpoint) parts.push(`--endpoint ${formatHostPort(o.endpoint.host, o.endpoint.port)}`);
  if (o.spawn) parts.push(`--spawn ${shellQuote(o.spawn)}`);
  if (o.allowRemote) parts.push("--allow-remote");
  if (o.tokenEnv !== "FONLINE_AI_TOKEN") parts.push(`--token-env ${o.tokenEnv}`);
  if (o.timeoutMs !== 2000) parts.push(`--timeout ${o.timeoutMs}`);
  parts.push(`--check ${check.id}`);
  if (finding.path !== undefined) parts.push(`--seed ${finding.seed} --path ${finding.path}`);
  return parts.join(" ");
}

const shellQuote = (s: string) => (/^[\w./:=@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The failing cases of a report, to run again exactly. */
function replayCases(report: Report, o: Options): { cases: Map<string, Case>; onlyChecks: Set<string> } {
  const cases = new Map<string, Case>();
  const onlyChecks = new Set<string>();
  for (const rule of report.rules) {
    for (const check of rule.checks ?? []) {
      if (check.verdict !== "fail" && check.verdict !== "warn") continue;
      if (o.check?.length && !o.check.includes(check.id)) continue;
      onlyChecks.add(check.id);
      cases.set(check.id, { seed: check.seed ?? report.seed, path: check.path });
    }
  }
  if (onlyChecks.size === 0) throw new Error(`--replay: the report holds no failing case to replay`);
  return { cases, onlyChecks };
}

/** After a replay: FIXED or STILL FAILING per replayed check (by its worst entry across rules). */
function replayVerdicts(io: Io, only: Set<string> | undefined): Reporter {
  return {
    name: "replay",
    onRunEnd(report) {
      const worstEntry = new Map<string, CheckReport>();
      for (const rule of report.rules) for (const check of rule.checks) {
        if (only && !only.has(check.id)) continue;
        const known = worstEntry.get(check.id);
        if (!known || worst(known.verdict, check.verdict) !== known.verdict) worstEntry.set(check.id, check);
      }
      for (const [id, check] of worstEntry) {
        const still = check.verdict === "fail" || check.verdict === "error" || check.verdict === "warn";
        io.out(`${still ? "STILL FAILING" : "FIXED"} ${id}${still ? `: ${check.message}` : ""}\n`);
      }
    },
  };
}

function listRules(contract: Contract): string {
  const lines: string[] = [];
  for (const rule of contract.rules) {
    const checks = allChecks.filter((c) => c.rules.includes(rule.id)).map((c) => c.id);
    const how = rule.observed === "wire" ? (checks.length ? checks.join(", ") : "no check yet") : `${rule.observed}: ${rule.reason}`;
    lines.push(`${rule.fullId}  [${rule.level}, ${rule.observed}]\n    ${how}`);
  }
  return lines.join("\n") + "\n";
}

const invokedDirectly = (() => {
  try { return realpathSync(process.argv[1] ?? "") === fileURLToPath(import.meta.url); } catch { return false; }
})();
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => { process.exitCode = code; },
    (err) => { process.stderr.write(`aicontrol-conformance: internal error: ${(err as Error).stack ?? err}\n`); process.exitCode = 1; },
  );
}
