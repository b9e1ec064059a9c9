import type { Contract, RuleId } from "../protocol/contract.js";
import { contract as shipped } from "../protocol/contract.js";
import { consoleReporter, FORMATS, githubReporter, markdownReporter } from "../reports/index.js";
import type { Report, Reporter } from "../reports/types.js";
import { allChecks } from "../suites/index.js";
import { type Baseline, baselineFromRun, checkUntil, loadBaseline } from "./baseline.js";
import { clientCommand } from "./cli/commands/client.js";
import { compareAfter, compareCommand } from "./cli/commands/compare.js";
import { exportCommand } from "./cli/commands/export.js";
import { listCommand } from "./cli/commands/list.js";
import { mergeCommand } from "./cli/commands/merge.js";
import { readContract, readReportFile } from "./cli/inputs.js";
import { OPTIONS, PROFILES, TIME_BUDGET } from "./cli/options/table.js";
import { UsageError } from "./cli/options/value.js";
import { type Deps, EXIT, type Io, type Outcome, type Values, verdictCode } from "./cli/outcome.js";
import { ruleSelector, validateGlobs } from "./cli/rules.js";
import { describeComparison } from "./compare.js";
import { saveFailures } from "./corpus.js";
import { checkDirectories, checkWritable, reportOutputs } from "./outputs.js";
import { replayCommand, replayTarget } from "./replay.js";
import { replayVerdicts } from "./replay-output.js";
import { chosenCases, openTarget, runSettings, runToken } from "./run/settings.js";
import { runOutcome } from "./run.js";
import { lastFailedSelection, namedChecks } from "./selection.js";
import { TOOL } from "./tool.js";

export type { Deps, Io, Outcome, Values } from "./cli/outcome.js";

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
  reporters: (replay?: boolean) => Reporter[];
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
  if (values.list) return listCommand(values, contract, selected, io);
  const outputs = reportOutputs(values);
  // A report on stdout keeps stdout for itself: the human output goes to stderr.
  const human = outputs.some((o) => o.file === "-") ? io.err : io.out;
  checkUntil(values);
  const shown = { write: human, verbose: values.verbose, quiet: values.quiet, live: io.live ?? false };
  const reporters = (replay = false) => [
    ...(io.console === false ? [] : [consoleReporter({ ...shown, replay })]),
    ...outputs.map((o) => FORMATS[o.format]!.create(o.file, io.out)),
    ...(io.env.GITHUB_STEP_SUMMARY ? [markdownReporter(undefined, io.env)] : []),
    ...(io.env.GITHUB_ACTIONS === "true" ? [githubReporter(human, io.env)] : []),
  ];
  const baseline = values.baseline ? loadBaseline(values.baseline, contract, allChecks) : undefined;
  const cli: Invocation = { values, contract, io, deps, selected, outputs, human, reporters, baseline, earlier };

  if (positionals[0] === "client") return clientCommand(values, positionals.slice(1), io, deps, reporters);
  if (values.exec) throw new UsageError('--exec tests a client: run "aicontrol-conformance client --exec CMD"');
  if (values.compare && positionals.length === 1 && !values.merge)
    return compareCommand(values.compare, positionals[0]!, io);
  if (positionals.length && !values.merge) {
    throw new UsageError(
      `unexpected argument "${positionals[0]}" (only --merge and --compare OLD NEW take file names)`,
    );
  }
  if (values.merge)
    return mergeCommand(
      values,
      {
        files: positionals,
        contract,
        baseline,
        outputs,
        reporters,
        human,
        afterward: compareAfter(values.compare, human),
      },
      io,
    );
  return bridgeRun(cli);
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
  // A replay's verdicts come first, before the console's summary line.
  const reporters = replaying
    ? [replayVerdicts(cli.human, onlyChecks, values.replay ? earlier?.report : undefined), ...cli.reporters(true)]
    : cli.reporters();
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
    exportCommand(values.export, report, options, io);
  }
  baselineFromRun(values, report, (line) => io.err(`aicontrol-conformance: ${line}\n`));
  if (run.previous) human(describeComparison(run.previous, report, values.compare!));
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

const randomSeed = () => Math.floor(Math.random() * 2 ** 31);

/** --last-failed: the rules that failed or could not be judged in an earlier report (all when none did). */
function lastFailed(report: Report, file: string, io: Io): string[] {
  const { rules, unreplayable } = lastFailedSelection(report);
  for (const why of unreplayable) io.err(`aicontrol-conformance: --last-failed cannot replay ${why}\n`);
  if (rules.length === 0) io.err(`aicontrol-conformance: no rule failed in ${file}: running every rule\n`);
  return rules;
}

export { TOOL };
