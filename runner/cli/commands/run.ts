// A run against a bridge, the command every other flag leaves: the target, the run, and what follows it
// (saved cases, reproducers, a baseline written, the comparison, the exit code). A replay is this run on a
// report's recorded cases (--replay, --last-failed): see ./replay.ts.
import type { Contract, RuleId } from "../../../protocol/contract.js";
import { FORMATS } from "../../../reports/index.js";
import type { Report, Reporter } from "../../../reports/types.js";
import { allChecks } from "../../../suites/index.js";
import { type Baseline, baselineFromRun } from "../../baseline.js";
import { describeComparison } from "../../compare.js";
import { saveFailures } from "../../corpus.js";
import { checkDirectories, checkWritable, type reportOutputs } from "../../outputs.js";
import { replayCommand, replayTarget } from "../../replay.js";
import { replayVerdicts } from "../../replay-output.js";
import { chosenCases, laneBridges, openTarget, runSettings, runToken, spawnOptions } from "../../run/settings.js";
import { runOutcome } from "../../run.js";
import { namedChecks } from "../../selection.js";
import { readReportFile } from "../inputs.js";
import { OPTIONS, PROFILES, TIME_BUDGET } from "../options/table.js";
import { UsageError } from "../options/value.js";
import { type Deps, EXIT, type Io, type Outcome, type Values, verdictCode } from "../outcome.js";
import { exportCommand } from "./export.js";

/** What every command of one invocation shares: the contract, the selection, and where reports go. */
export interface Invocation {
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

/** A run against a bridge: the target, the run, and what follows it (saved cases, reproducers, the exit code). */
export async function runCommand(cli: Invocation): Promise<Outcome> {
  const { contract, io, deps, earlier } = cli;
  // The failures of a report are taken up on the target that failed, with the report's seed and
  // run count, so that its cases are the same cases: never silently on another target.
  const say = (line: string) => io.err(`aicontrol-conformance: ${line}\n`);
  const previous = cli.values.compare ? readReportFile(cli.values.compare, "--compare") : undefined;
  const values = earlier ? replayTarget(earlier.report, cli.values, earlier.flag, say) : cli.values;
  if ((values.lanes ?? 1) > 1 && !values.spawn)
    throw new UsageError(
      `--lanes ${values.lanes} starts the bridge more than once, so it takes --spawn: an --endpoint or the built-in bridge is one bridge`,
    );
  const settings = runSettings(values, contract, earlier?.report, Boolean(deps.builtIn));
  const { runs, seed, timeoutMs, tokenEnv, endpoint, profile } = settings;
  const { cases, onlyChecks, caseMode } = chosenCases(values, earlier?.report, seed, runs);
  namedChecks([...(onlyChecks ?? [])], allChecks);
  checkWritable(cli.outputs);
  checkDirectories(values);
  const token = runToken(values, tokenEnv, io);
  const spawning = spawnOptions(values, io);
  const { target, unreachable, targetInfo } = await openTarget(values, settings, token, io, spawning, deps.builtIn);
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
      lanes: laneBridges(values, spawning),
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
