#!/usr/bin/env node
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ContractError, loadContract, type Contract } from "../protocol/contract.js";
import { allChecks } from "../suites/index.js";
import type { Check, Finding } from "../suites/check.js";
import { consoleReporter } from "../reports/console.js";
import { jsonReporter } from "../reports/json.js";
import { junitReporter } from "../reports/junit.js";
import { htmlReporter } from "../reports/html.js";
import { markdownReporter } from "../reports/markdown.js";
import { parseOptions, ruleSelector, TIME_BUDGET, UsageError, USAGE, type Options } from "./options.js";
import { run, redactDeep, type Reporter } from "./run.js";
import { embeddedTarget, endpointTarget, isLoopback, spawnTarget, TargetError, type Target } from "./target.js";
import { formatHostPort } from "./connection.js";
import { TOOL, type Report } from "./report.js";
import { mergeReports } from "./merge.js";
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
  let contract: Contract;
  let options: Options;
  try {
    contract = loadContract();
    options = parseOptions(argv, contract, io.env);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ContractError) {
      io.err(`aicontrol-conformance: ${err.message}\nRun with --help for usage.\n`);
      return 2;
    }
    throw err;
  }
  if (options.help) { io.out(USAGE + "\n"); return 0; }
  if (options.version) { io.out(`${TOOL.name} ${TOOL.version}\n`); return 0; }
  if (options.list) { io.out(listRules(contract)); return 0; }
  if (options.merge) return merge(options, io);

  let paths = new Map<string, string>();
  let onlyChecks = options.check?.length ? new Set(options.check) : undefined;
  if (options.replay) {
    try {
      ({ paths, onlyChecks, seed: options.seed } = readReplay(options.replay, options));
    } catch (err) {
      io.err(`aicontrol-conformance: ${(err as Error).message}\n`);
      return 2;
    }
  } else if (options.path) {
    paths.set(options.check![0]!, options.path);
  }
  const unknown = [...(onlyChecks ?? [])].filter((id) => !allChecks.some((c) => c.id === id));
  if (unknown.length) {
    io.err(`aicontrol-conformance: no check named ${unknown.join(", ")}; --list shows them all\n`);
    return 2;
  }
  for (const file of [options.json, options.junit, options.html, options.markdown]) {
    if (!file) continue;
    try { mkdirSync(dirname(resolve(file)), { recursive: true }); } catch (err) {
      io.err(`aicontrol-conformance: cannot write ${file}: ${(err as NodeJS.ErrnoException).code}\n`);
      return 2;
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
    if (err instanceof UsageError) { io.err(`aicontrol-conformance: ${err.message}\n`); return 2; }
    if (!(err instanceof TargetError)) throw err;
    unreachable = redactDeep(err.message, token);
    io.err(`aicontrol-conformance: target unreachable: ${unreachable}\n`);
  }
  const stop = () => { void target?.stop(); };
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
      selected: ruleSelector(options, contract), onlyChecks, paths,
      replayCommand: (check, finding) => replayCommand(check, finding, options),
      shard: options.shard, durationMs: options.durationMs,
      reporters,
      log: (line) => io.err(line + "\n"),
    });
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await target?.stop();
  }
  if (unreachable) return 3;
  return report.summary.fail + report.summary.error > 0 ? 1 : 0;
}

/** --merge: one report from shard reports, through the same reporters as a run. */
async function merge(options: Options, io: Io): Promise<number> {
  let merged: Report;
  try {
    merged = mergeReports(options.merge!.map((file) => {
      let report: Report;
      try { report = JSON.parse(readFileSync(file, "utf8")) as Report; } catch (err) {
        throw new Error(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      if (report?.schemaVersion !== 1 || !Array.isArray(report.rules)) throw new Error(`${file} is not an aicontrol-conformance JSON report (schemaVersion 1)`);
      return report;
    }));
  } catch (err) {
    io.err(`aicontrol-conformance: --merge: ${(err as Error).message}\n`);
    return 2;
  }
  for (const reporter of outputReporters(options, io)) {
    try { await reporter.onRunEnd?.(merged); } catch (err) { io.err(`reporter "${reporter.name}" failed: ${(err as Error).message}\n`); }
  }
  return merged.summary.fail + merged.summary.error > 0 ? 1 : 0;
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

/** Reads a JSON report and picks its failing cases to run again. */
function readReplay(file: string, o: Options): { paths: Map<string, string>; onlyChecks: Set<string>; seed: number } {
  let report: Report;
  try {
    report = JSON.parse(readFileSync(file, "utf8")) as Report;
  } catch (err) {
    throw new Error(`cannot read --replay ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (report?.schemaVersion !== 1 || !Array.isArray(report.rules)) throw new Error(`--replay ${file} is not an aicontrol-conformance JSON report (schemaVersion 1)`);
  const paths = new Map<string, string>();
  const onlyChecks = new Set<string>();
  for (const rule of report.rules) {
    for (const check of rule.checks ?? []) {
      if (check.verdict !== "fail" && check.verdict !== "warn") continue;
      if (o.check?.length && !o.check.includes(check.id)) continue;
      onlyChecks.add(check.id);
      if (check.path !== undefined) paths.set(check.id, check.path);
    }
  }
  if (onlyChecks.size === 0) throw new Error(`--replay ${file} holds no failing case to replay`);
  return { paths, onlyChecks, seed: report.seed };
}

/** After a replay: FIXED or STILL FAILING per replayed check. */
function replayVerdicts(io: Io, only: Set<string> | undefined): Reporter {
  return {
    name: "replay",
    onRunEnd(report) {
      const seen = new Set<string>();
      for (const rule of report.rules) for (const check of rule.checks) {
        if (seen.has(check.id) || (only && !only.has(check.id))) continue;
        seen.add(check.id);
        const still = check.verdict === "fail" || check.verdict === "error" || check.verdict === "warn";
        io.out(`${still ? "STILL FAILING" : "FIXED"} ${check.id}${still ? `: ${check.message}` : ""}\n`);
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
