// One invocation, from option values to an exit code and a report: the CLI and the API both come here, and
// each command (run, list, merge, compare, client, export, replay) has a file of its own in cli/commands/.
import { contract as shipped } from "../protocol/contract.js";
import { consoleReporter, FORMATS, githubReporter, markdownReporter } from "../reports/index.js";
import { allChecks } from "../suites/index.js";
import { checkUntil, loadBaseline } from "./baseline.js";
import { clientCommand } from "./cli/commands/client.js";
import { compareAfter, compareCommand } from "./cli/commands/compare.js";
import { listCommand } from "./cli/commands/list.js";
import { mergeCommand } from "./cli/commands/merge.js";
import { lastFailedRules } from "./cli/commands/replay.js";
import { type Invocation, runCommand } from "./cli/commands/run.js";
import { readContract, readReportFile } from "./cli/inputs.js";
import { UsageError } from "./cli/options/value.js";
import { type Deps, EXIT, type Io, type Outcome, type Values } from "./cli/outcome.js";
import { ruleSelector, validateGlobs } from "./cli/rules.js";
import { reportOutputs } from "./outputs.js";
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

async function execute(values: Values, positionals: string[], io: Io, deps: Deps): Promise<Outcome> {
  const contract = values.contract ? readContract(values.contract) : shipped;
  validateGlobs(values.rules ?? [], "--rules", contract);
  validateGlobs(values.skip ?? [], "--skip", contract);
  const flag = values.replay ? "--replay" : values.lastFailed ? "--last-failed" : undefined;
  const earlier = flag ? { report: readReportFile((values.replay ?? values.lastFailed)!, flag), flag } : undefined;
  const rules = values.lastFailed ? lastFailedRules(earlier!.report, values.lastFailed, io) : (values.rules ?? []);
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
  return runCommand(cli);
}

export { TOOL };
