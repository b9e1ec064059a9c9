import { readFileSync } from "node:fs";
import picomatch from "picomatch";
import { type Contract, ContractError, loadContract, type RuleId, contract as shipped } from "../protocol/contract.js";
import { consoleReporter, FORMATS, githubReporter, markdownReporter } from "../reports/index.js";
import { writeOutput } from "../reports/output.js";
import { reportProblem } from "../reports/schema.js";
import type { Report, Reporter } from "../reports/types.js";
import type { Check } from "../suites/harness/check.js";
import { allChecks } from "../suites/index.js";
import { UNCOVERED } from "./aggregate.js";
import { applyBaseline, type Baseline, baselineSection, loadBaseline } from "./baseline.js";
import { clientUnstarted, runClientMode } from "./client.js";
import { compareReports, formatChanges } from "./compare.js";
import { saveFailures } from "./corpus.js";
import { exportReproducers } from "./export.js";
import { mergeReports, mixedReports, shardProblem } from "./merge.js";
import { OPTIONS, type OptionValues, PROFILES, type Profile, suggest, TIME_BUDGET, UsageError } from "./options.js";
import { checkDirectories, checkWritable, reportOutputs } from "./outputs.js";
import { replayCommand, replayTarget, replayVerdicts } from "./replay.js";
import { chosenCases, openTarget, runSettings, runToken } from "./run/settings.js";
import { runOutcome } from "./run.js";
import { checkHint, listSelection, namedChecks } from "./selection.js";
import type { BridgeFactory } from "./targets.js";
import { TOOL } from "./tool.js";

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** A live progress line (a terminal). */
  live?: boolean;
  /** Print the console report (the API may run silently). */
  console?: boolean;
}

export interface Deps {
  /** The built-in target's bridge; without it, a target must be given. */
  builtIn?: BridgeFactory;
  signal?: AbortSignal;
  /** Rules whose checks run first (watch mode: the ones that failed last time). */
  first?: ReadonlySet<RuleId>;
}

export type Values = Partial<OptionValues>;

/** The exit code and, where a run or a merge happened, its report. */
export interface Outcome {
  code: number;
  report?: Report;
}

const EXIT = { pass: 0, fail: 1, usage: 2, unreachable: 3, interrupted: 130 } as const;

export async function conformance(values: Values, positionals: string[], io: Io, deps: Deps = {}): Promise<Outcome> {
  try {
    return await execute(values, positionals, io, deps);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`aicontrol-conformance: ${err.message}\nRun with --help for usage.\n`);
      return { code: EXIT.usage };
    }
    throw err;
  }
}

/** What every command of one invocation shares: the contract, the selection, and where reports go. */
interface Invocation {
  values: Values;
  contract: Contract;
  io: Io;
  deps: Deps;
  selected: (id: RuleId) => boolean;
  outputs: ReturnType<typeof reportOutputs>;
  /** Where the human output goes: stderr when a report takes stdout. */
  human: (text: string) => void;
  reporters: () => Reporter[];
  baseline?: Baseline;
  /** A report whose failures this run takes up again, and the flag that named it (--replay, --last-failed). */
  earlier?: { report: Report; flag: string };
}

async function execute(values: Values, positionals: string[], io: Io, deps: Deps): Promise<Outcome> {
  const contract = values.contract ? readContract(values.contract) : shipped;
  validateGlobs(values.rules ?? [], "--rules", contract);
  validateGlobs(values.skip ?? [], "--skip", contract);
  const flag = values.replay ? "--replay" : values.lastFailed ? "--last-failed" : undefined;
  const earlier = flag ? { report: readReportFile((values.replay ?? values.lastFailed)!, flag), flag } : undefined;
  const rules = values.lastFailed ? lastFailed(earlier!.report, values.lastFailed, io) : (values.rules ?? []);
  const selected = ruleSelector(rules, values.skip ?? [], contract);
  if (values.list) return list(values, contract, selected, io);
  const outputs = reportOutputs(values);
  // A report on stdout keeps stdout for itself: the human output goes to stderr.
  const human = outputs.some((o) => o.file === "-") ? io.err : io.out;
  const reporters = () => [
    ...(io.console === false
      ? []
      : [consoleReporter({ write: human, verbose: values.verbose, quiet: values.quiet, live: io.live ?? false })]),
    ...outputs.map((o) => FORMATS[o.format]!.create(o.file, io.out)),
    ...(io.env.GITHUB_STEP_SUMMARY ? [markdownReporter(undefined, io.env)] : []),
    ...(io.env.GITHUB_ACTIONS === "true" ? [githubReporter(human, io.env)] : []),
  ];
  const baseline = values.baseline ? loadBaseline(values.baseline, contract, allChecks) : undefined;
  const cli: Invocation = { values, contract, io, deps, selected, outputs, human, reporters, baseline, earlier };

  if (positionals[0] === "client") return clientMode(values, positionals.slice(1), io, deps, reporters);
  if (values.exec) throw new UsageError('--exec tests a client: run "aicontrol-conformance client --exec CMD"');
  if (values.compare && positionals.length === 1 && !values.merge)
    return compareTwo(cli, values.compare, positionals[0]!);
  if (positionals.length && !values.merge) {
    throw new UsageError(
      `unexpected argument "${positionals[0]}" (only --merge and --compare OLD NEW take file names)`,
    );
  }
  if (values.merge) return merge(cli, positionals);
  return bridgeRun(cli);
}

function list(values: Values, contract: Contract, selected: (id: RuleId) => boolean, io: Io): Outcome {
  const listed = listSelection(values.check, selected);
  if (values.json)
    writeOutput(values.json, `${JSON.stringify(listJson(contract, listed.checks, listed.rules), null, 2)}\n`, io.out);
  else io.out(listRules(contract, listed.checks, listed.rules));
  return { code: EXIT.pass };
}

function compareTwo(cli: Invocation, older: string, newer: string): Outcome {
  const changes = compareReports(readReportFile(older, "--compare"), readReportFile(newer, "--compare"));
  cli.io.out(formatChanges(changes, older));
  return { code: changes.some((c) => c.worse) ? EXIT.fail : EXIT.pass };
}

async function merge(cli: Invocation, files: string[]): Promise<Outcome> {
  const { values, baseline, contract, human } = cli;
  const previous = values.compare ? readReportFile(values.compare, "--compare") : undefined;
  if (files.length === 0) throw new UsageError("--merge takes the JSON reports to merge: --merge a.json b.json ...");
  checkWritable(cli.outputs);
  const inputs = files.map((f) => readReportFile(f, "--merge"));
  const mixed = shardProblem(inputs, files) ?? (values.force ? undefined : mixedReports(inputs, files));
  if (mixed) throw new UsageError(`--merge: ${mixed}`);
  const merged = mergeReports(inputs);
  if (baseline) merged.baseline = baselineSection(merged, baseline, contract.prefix);
  const lost = await writeReports(cli.reporters(), merged, cli.io);
  if (previous) human(formatChanges(compareReports(previous, merged), values.compare!));
  return {
    code: lost ? EXIT.usage : verdictCode(merged, baseline, contract, human, values.allowUncovered),
    report: merged,
  };
}

/** A run against a bridge: the target, the run, and what follows it (saved cases, reproducers, the exit code). */
async function bridgeRun(cli: Invocation): Promise<Outcome> {
  const { contract, io, deps, earlier } = cli;
  // The failures of a report are taken up on the target that failed, with the report's seed and
  // run count, so that its cases are the same cases: never silently on another target.
  const say = (line: string) => io.err(`aicontrol-conformance: ${line}\n`);
  const previous = cli.values.compare ? readReportFile(cli.values.compare, "--compare") : undefined;
  const values = earlier ? replayTarget(earlier.report, cli.values, earlier.flag, say) : cli.values;
  const settings = runSettings(values, contract, earlier?.report, Boolean(deps.builtIn));
  const { runs, seed, timeoutMs, tokenEnv, endpoint, profile } = settings;
  const { cases, onlyChecks, caseMode } = chosenCases(values, earlier?.report, seed, runs);
  namedChecks([...(onlyChecks ?? [])], allChecks);
  checkWritable(cli.outputs);
  checkDirectories(values);
  const token = runToken(values, tokenEnv, io);
  const { target, unreachable, targetInfo } = await openTarget(values, settings, token, io, deps.builtIn);
  const replaying = caseMode === "replay";
  const reporters = cli.reporters();
  if (replaying) reporters.push(replayVerdicts(cli.human, onlyChecks, values.replay ? earlier?.report : undefined));
  let outcome: Awaited<ReturnType<typeof runOutcome>>;
  try {
    outcome = await runOutcome({
      contract,
      checks: allChecks,
      target,
      targetInfo,
      unreachable,
      token,
      tokenEnv,
      timeoutMs,
      checkDeadlineMs: Math.max(30_000, timeoutMs * 15, runs * 100),
      timeBudgetMs: TIME_BUDGET[profile],
      runs,
      seed,
      profile,
      strict: values.strict ?? false,
      selected: cli.selected,
      onlyChecks,
      cases,
      caseMode,
      ...(caseMode === "last-failed" ? { freshSeed: randomSeed() } : {}),
      baseline: cli.baseline,
      replayCommand: (check, finding) =>
        replayCommand(check, finding, values, endpoint, { tokenEnv, timeoutMs, runs, defaultRuns: PROFILES.standard }),
      shard: settings.shard,
      maxFailures: values.bail ? 1 : values.maxFailures,
      stopFlag: values.bail ? "--bail" : `--max-failures ${values.maxFailures}`,
      concurrency: values.concurrency,
      // A replay judges one case once; a fresh run grades each failure by re-sending it.
      recheck: replaying ? 0 : (values.recheck ?? OPTIONS.recheck.default),
      durationMs: values.duration,
      signal: deps.signal,
      first: deps.first,
      reporters,
      log: (line) => io.err(`${line}\n`),
    });
  } finally {
    await target?.stop();
  }
  return afterRun(cli, values, outcome, { token, unreachable, onlyChecks, replaying, timeoutMs, tokenEnv, previous });
}

/** After a run: the corpus and the reproducers written, the comparison printed, and the exit code. */
function afterRun(
  cli: Invocation,
  values: Values,
  { report, lostReporters }: Awaited<ReturnType<typeof runOutcome>>,
  run: {
    token?: string;
    unreachable?: string;
    onlyChecks?: Set<string>;
    replaying: boolean;
    timeoutMs: number;
    tokenEnv: string;
    previous?: Report;
  },
): Outcome {
  const { io, contract, human } = cli;
  if (values.saveFailures) {
    const saved = saveFailures(values.saveFailures, report);
    if (saved)
      io.err(`aicontrol-conformance: saved ${saved} failing case${saved === 1 ? "" : "s"} to ${values.saveFailures}\n`);
  }
  if (values.export) {
    const options = { contract, tokenEnv: run.tokenEnv, tokenConfigured: Boolean(run.token), timeoutMs: run.timeoutMs };
    const { written, refused } = exportReproducers(values.export, report, options);
    for (const { check, reason } of refused)
      io.err(`aicontrol-conformance: --export: no reproducer of ${check}: ${reason}\n`);
    if (written.length) io.err(`aicontrol-conformance: exported ${written.length} reproducer(s) to ${values.export}\n`);
  }
  if (run.previous) human(formatChanges(compareReports(run.previous, report), values.compare!));
  const lost = lostReporters.filter((name) => name in FORMATS);
  if (lost.length) {
    io.err(`aicontrol-conformance: the ${lost.join(", ")} report could not be written (see above)\n`);
    return { code: EXIT.usage, report };
  }
  if (run.unreachable || report.blocked) return { code: EXIT.unreachable, report };
  if (cli.deps.signal?.aborted) return { code: EXIT.interrupted, report };
  // A replay that still fails says so (1); one that could not run a case claims nothing (3).
  const unreplayed = (c: { id: string; verdict: string }) =>
    run.onlyChecks?.has(c.id) && (c.verdict === "error" || c.verdict === "skip");
  const failed = report.rules.some((r) => r.verdict === "fail");
  if (run.replaying && !failed && report.rules.some((r) => r.checks.some(unreplayed)))
    return { code: EXIT.unreachable, report };
  return { code: verdictCode(report, cli.baseline, contract, human, values.allowUncovered), report };
}

/** Client mode: the tool plays a hostile bridge for the command given with --exec. */
async function clientMode(
  values: Values,
  rest: string[],
  io: Io,
  deps: Deps,
  reporters: () => Reporter[],
): Promise<Outcome> {
  if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}" after "client"`);
  if (!values.exec)
    throw new UsageError('client mode needs the client command: client --exec "CMD {host} {port} {timeout}"');
  if (values.endpoint || values.spawn) throw new UsageError("client mode takes --exec, not --endpoint or --spawn");
  const contract = values.contract ? readContract(values.contract) : shipped;
  const outputs = reportOutputs(values);
  checkWritable(outputs);
  const report = await runClientMode({
    contract,
    command: values.exec,
    clientTimeoutMs: values.clientTimeout ?? 1000,
    seed: values.seed ?? Math.floor(Math.random() * 2 ** 31),
    runs: values.runs ?? PROFILES[(values.profile ?? OPTIONS.profile.default) as Profile],
    strict: values.strict ?? false,
    selected: ruleSelector(values.rules ?? [], values.skip ?? [], contract),
    env: io.env,
    reporters: reporters(),
    log: (line) => io.err(`${line}\n`),
    signal: deps.signal,
  });
  if (deps.signal?.aborted) return { code: EXIT.interrupted, report };
  if (clientUnstarted(report)) return { code: EXIT.unreachable, report };
  return { code: verdictCode(report, undefined, contract, io.out, values.allowUncovered), report };
}

function readContract(file: string): Contract {
  try {
    return loadContract(file);
  } catch (err) {
    if (err instanceof ContractError) throw new UsageError(`--contract ${err.message}`);
    throw err;
  }
}

/** The end of a run without one (--merge): the reporters' last hook, and whether one failed. */
async function writeReports(reporters: Reporter[], report: Report, io: Io): Promise<boolean> {
  let lost = false;
  for (const reporter of reporters) {
    try {
      await reporter.onRunEnd?.(report);
    } catch (err) {
      lost = true;
      io.err(`aicontrol-conformance: the ${reporter.name} report could not be written: ${(err as Error).message}\n`);
    }
  }
  return lost;
}

/** 1 when a rule failed or could not be judged (beyond what the baseline accepts), or a baseline entry is stale. */
function verdictCode(
  report: Report,
  baseline: Baseline | undefined,
  contract: Contract,
  out: (t: string) => void,
  allowUncovered?: boolean,
): number {
  const counts = (r: Report["rules"][number]) =>
    r.verdict === "fail" || (r.verdict === "error" && !(allowUncovered && r.reason === UNCOVERED));
  if (!baseline) return report.rules.some(counts) ? EXIT.fail : EXIT.pass;
  const { known, stale, expired, consistent, unexpected } = applyBaseline(report, baseline, contract.prefix);
  out(
    `baseline ${baseline.file}: ${known.length} known failure${known.length === 1 ? "" : "s"} accepted, ${unexpected.length} new, ${stale.length} stale\n`,
  );
  for (const e of stale) out(`  STALE ${e.id}: it passes now, so remove it from the baseline (it said: ${e.reason})\n`);
  for (const e of expired) out(`  EXPIRED ${e.id}: its entry ran until ${e.until}, so its failure counts again\n`);
  for (const e of consistent)
    out(
      `  NO LONGER FLAKY ${e.id}: it failed every time it was re-sent, so it is a failure now (it said: ${e.reason})\n`,
    );
  for (const id of unexpected) out(`  NEW   ${id}\n`);
  return unexpected.length + stale.length > 0 ? EXIT.fail : EXIT.pass;
}

/** Reads a JSON report written by this tool. */
export function readReportFile(file: string, flag: string): Report {
  let report: Report;
  try {
    report = JSON.parse(readFileSync(file, "utf8")) as Report;
  } catch (err) {
    throw new UsageError(
      `cannot read ${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const problem = reportProblem(report);
  if (problem)
    throw new UsageError(`${flag} ${file} is not an aicontrol-conformance JSON report (schemaVersion 1): ${problem}`);
  return report;
}

const randomSeed = () => Math.floor(Math.random() * 2 ** 31);

/** --last-failed: the rules that failed or could not be judged in an earlier report (all when none did). */
function lastFailed(report: Report, file: string, io: Io): string[] {
  const failed = report.rules.filter((r) => r.verdict === "fail" || r.verdict === "error").map((r) => r.id);
  if (failed.length === 0) io.err(`aicontrol-conformance: no rule failed in ${file}: running every rule\n`);
  return failed;
}

/** Does a --rules/--skip glob match a rule (by short or full ID)? Globs are picomatch's: *, ?, {a,b}, [..]. */
export function globMatches(glob: string, rule: { id: string; fullId: string }): boolean {
  const test = picomatch(glob.replace(/^!/, ""), { dot: true });
  return test(rule.id) || test(rule.fullId);
}

function validateGlobs(globs: string[], flag: string, contract: Contract): void {
  for (const glob of globs) {
    if (contract.rules.some((r) => globMatches(glob, r))) continue;
    throw new UsageError(
      `${flag} ${glob} matches no rule${suggest(
        glob,
        contract.rules.map((r) => r.id),
      )}${checkHint(glob)}; --list shows them all`,
    );
  }
}

/**
 * Selection predicate from --rules and --skip. A glob in --rules that starts with ! leaves
 * rules out, as --skip does; --rules made only of those selects every other rule.
 */
export function ruleSelector(rules: string[], skip: string[], contract: Contract): (id: RuleId) => boolean {
  const positive = rules.filter((g) => !g.startsWith("!"));
  const negative = [...skip, ...rules.filter((g) => g.startsWith("!"))];
  return (id) => {
    const rule = contract.rule(id);
    const wanted = positive.length === 0 || positive.some((g) => globMatches(g, rule));
    return wanted && !negative.some((g) => globMatches(g, rule));
  };
}

function listJson(contract: Contract, checks: readonly Check[], selected: (id: RuleId) => boolean) {
  return contract.rules
    .filter((r) => selected(r.id))
    .map((rule) => ({
      id: rule.fullId,
      title: rule.title,
      level: rule.level,
      observed: rule.observed,
      ...(rule.reason ? { reason: rule.reason } : {}),
      checks: checks.filter((c) => c.rules.includes(rule.id)).map((c) => ({ id: c.id, description: c.description })),
    }));
}

function listRules(contract: Contract, checks: readonly Check[], selected: (id: RuleId) => boolean): string {
  const lines: string[] = [];
  for (const rule of contract.rules.filter((r) => selected(r.id))) {
    const covering = checks.filter((c) => c.rules.includes(rule.id)).map((c) => c.id);
    const how =
      rule.observed === "wire"
        ? covering.length
          ? covering.join(", ")
          : UNCOVERED
        : `${rule.observed}: ${rule.reason}`;
    lines.push(`${rule.fullId}  [${rule.level}, ${rule.observed}]\n    ${how}`);
  }
  return `${lines.join("\n")}\n`;
}

export { TOOL };
