// One run, from option values to an exit code and a report. The CLI and the API both come
// here; neither argv nor signal handlers nor unasked-for files are this module's business.
import { randomBytes } from "node:crypto";
import picomatch from "picomatch";
import { type Contract, ContractError, loadContract, type RuleId, contract as shipped } from "../protocol/contract.js";
import { consoleReporter, FORMATS, githubReporter, markdownReporter } from "../reports/index.js";
import { writeOutput } from "../reports/output.js";
import type { Report, Reporter } from "../reports/types.js";
import type { Check } from "../suites/harness/check.js";
import { formatHostPort } from "../suites/harness/connection.js";
import { redactor, STRONG_TOKEN_LENGTH } from "../suites/harness/redact.js";
import { allChecks } from "../suites/index.js";
import { UNCOVERED } from "./aggregate.js";
import type { Case } from "./attempt.js";
import {
  applyBaseline,
  type Baseline,
  baselineFromRun,
  baselineSection,
  checkUntil,
  loadBaseline,
} from "./baseline.js";
import { clientUnstarted, runClientMode } from "./client.js";
import { compareReports, describeComparison } from "./compare.js";
import { corpusCases, loadCorpus, saveFailures } from "./corpus.js";
import { exportReproducers } from "./export.js";
import { afterMerge, campaignLines, mergeReports, mixedReports, shardProblem } from "./merge.js";
import { OPTIONS, type OptionValues, PROFILES, type Profile, suggest, TIME_BUDGET, UsageError } from "./options.js";
import { checkDirectories, checkWritable, reportOutputs } from "./outputs.js";
import { failingCases, replayCommand, replayTarget } from "./replay.js";
import { replayVerdicts } from "./replay-output.js";
import { readReportFile } from "./report-file.js";
import { run } from "./run.js";
import { checkHint, listSelection, namedChecks } from "./selection.js";
import {
  type BridgeFactory,
  embeddedTarget,
  endpointTarget,
  isLoopback,
  parseEndpoint,
  RemoteRefused,
  spawnTarget,
  type Target,
  TargetError,
} from "./targets.js";
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

async function execute(given: Values, positionals: string[], io: Io, deps: Deps): Promise<Outcome> {
  let values = given;
  const contract = values.contract ? readContract(values.contract) : shipped;
  const checks = allChecks;
  validateGlobs(values.rules ?? [], "--rules", contract);
  validateGlobs(values.skip ?? [], "--skip", contract);
  // A report whose failures this run takes up again (--replay, --last-failed).
  const replayFlag = values.replay ? "--replay" : values.lastFailed ? "--last-failed" : undefined;
  const earlier = replayFlag ? readReportFile((values.replay ?? values.lastFailed)!, replayFlag) : undefined;
  const rules = values.lastFailed ? lastFailed(earlier!, values.lastFailed, io) : (values.rules ?? []);
  const selected = ruleSelector(rules, values.skip ?? [], contract);
  if (values.list) {
    const listed = listSelection(values.check, selected);
    if (values.json)
      writeOutput(values.json, `${JSON.stringify(listJson(contract, listed.checks, listed.rules), null, 2)}\n`, io.out);
    else io.out(listRules(contract, listed.checks, listed.rules));
    return { code: EXIT.pass };
  }
  const outputs = reportOutputs(values);
  const toStdout = outputs.some((o) => o.file === "-");
  // A report on stdout keeps stdout for itself: the human output goes to stderr.
  const human = toStdout ? io.err : io.out;
  const baseline = values.baseline ? loadBaseline(values.baseline, contract, checks) : undefined;
  checkUntil(values);
  const said = (line: string) => io.err(`aicontrol-conformance: ${line}\n`);
  const shown = { write: human, verbose: values.verbose, quiet: values.quiet, live: io.live ?? false };
  const reporters = (replay = false) => [
    ...(io.console === false ? [] : [consoleReporter({ ...shown, replay })]),
    ...outputs.map((o) => FORMATS[o.format]!.create(o.file, io.out)),
    ...(io.env.GITHUB_STEP_SUMMARY ? [markdownReporter(undefined, io.env)] : []),
    ...(io.env.GITHUB_ACTIONS === "true" ? [githubReporter(human, io.env)] : []),
  ];

  if (positionals[0] === "client") return clientMode(values, positionals.slice(1), io, deps, reporters);
  if (values.exec) throw new UsageError('--exec tests a client: run "aicontrol-conformance client --exec CMD"');
  if (values.compare && positionals.length === 1 && !values.merge) {
    const [before, after] = [values.compare, positionals[0]!].map((f) => readReportFile(f, "--compare"));
    io.out(describeComparison(before!, after!, values.compare, positionals[0]));
    return { code: compareReports(before!, after!).some((c) => c.worse) ? EXIT.fail : EXIT.pass };
  }
  if (positionals.length && !values.merge) {
    throw new UsageError(
      `unexpected argument "${positionals[0]}" (only --merge and --compare OLD NEW take file names)`,
    );
  }
  const previous = values.compare ? readReportFile(values.compare, "--compare") : undefined;
  if (values.merge) {
    if (positionals.length === 0)
      throw new UsageError("--merge takes the JSON reports to merge: --merge a.json b.json ...");
    checkWritable(outputs);
    const inputs = positionals.map((f) => readReportFile(f, "--merge"));
    const mixed = shardProblem(inputs, positionals) ?? (values.force ? undefined : mixedReports(inputs, positionals));
    if (mixed) throw new UsageError(`--merge: ${mixed}`);
    const merged = mergeReports(inputs, positionals);
    if (baseline) merged.baseline = baselineSection(merged, baseline, contract.prefix);
    afterMerge(values, merged, said);
    const lost = await writeReports(reporters(), merged, io);
    if (merged.parts) human(campaignLines(merged));
    if (previous) human(describeComparison(previous, merged, values.compare!));
    return {
      code: lost ? EXIT.usage : verdictCode(merged, baseline, contract, human, values.allowUncovered),
      report: merged,
    };
  }

  // The failures of a report are taken up on the target that failed, with the report's seed and
  // run count, so that its cases are the same cases: never silently on another target.
  if (earlier)
    values = replayTarget(earlier, values, replayFlag!, (line) => io.err(`aicontrol-conformance: ${line}\n`));
  const profile = (values.profile ?? OPTIONS.profile.default) as Profile;
  const runs = values.runs ?? earlier?.runs ?? PROFILES[profile];
  const seed = values.seed ?? earlier?.seed ?? randomSeed();
  const timeoutMs = values.timeout ?? OPTIONS.timeout.default;
  const tokenEnv = values.tokenEnv ?? contract.defaults.tokenEnv;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) {
    throw new UsageError("--token-env takes the name of an environment variable, not a value like that");
  }
  const endpoint = values.endpoint ? parseEndpoint(values.endpoint) : undefined;
  if (values.endpoint && !endpoint) {
    throw new UsageError(
      `--endpoint must be HOST:PORT with a port from 1 to 65535 (IPv6 as [::1]:PORT), not "${values.endpoint}"`,
    );
  }
  if (endpoint && values.spawn) throw new UsageError("give either --endpoint or --spawn, not both");
  if (endpoint && !isLoopback(endpoint.host) && !values.allowRemote)
    throw new UsageError(new RemoteRefused(endpoint.host).message);
  if (!endpoint && !values.spawn && !deps.builtIn)
    throw new UsageError("give a target: --endpoint HOST:PORT or --spawn CMD");
  const shard = values.shard ? parseShard(values.shard) : undefined;
  if (values.replayPath && !values.path) throw new UsageError("--replay-path goes with --path (and one --check)");
  if (values.path && values.check?.length !== 1)
    throw new UsageError("--path replays one case: give exactly one --check ID with it");

  let cases = new Map<string, Case>();
  let onlyChecks = values.check?.length ? new Set(values.check) : undefined;
  if (values.replay) {
    cases = failingCases(earlier!, values.check);
    if (cases.size === 0) throw new UsageError("--replay: the report holds no failing case to replay");
    onlyChecks = new Set(cases.keys());
  } else if (values.lastFailed) cases = failingCases(earlier!, undefined, ["fail"]);
  else if (values.path) {
    cases.set(values.check![0]!, {
      seed,
      path: values.path,
      ...(values.replayPath ? { replayPath: values.replayPath } : {}),
      runs,
    });
  } else if (values.saveFailures) cases = corpusCases(loadCorpus(values.saveFailures));
  const caseMode = values.replay || values.path ? "replay" : values.lastFailed ? "last-failed" : "corpus";
  namedChecks([...(onlyChecks ?? [])], checks);
  checkWritable(outputs);
  checkDirectories(values);

  const builtIn = !endpoint && !values.spawn;
  // The built-in bridge gets a token of its own, so a plain `npm start` exercises authorization too.
  const token = io.env[tokenEnv] || (builtIn ? randomBytes(12).toString("hex") : undefined);
  if (token && token.length < STRONG_TOKEN_LENGTH && !builtIn) {
    io.err(
      `aicontrol-conformance: warning: the token in ${tokenEnv} is under ${STRONG_TOKEN_LENGTH} characters, which is weak; it is redacted where it stands alone\n`,
    );
  }
  const redact = redactor(token);
  let target: Target | undefined;
  let unreachable: string | undefined;
  try {
    if (endpoint) {
      target = await endpointTarget(endpoint.host, endpoint.port, {
        timeoutMs,
        waitMs: values.waitForEndpoint,
        allowRemote: values.allowRemote,
      });
    } else if (values.spawn) {
      target = await spawnTarget(values.spawn, { startTimeoutMs: values.startTimeout ?? 30_000, env: io.env });
      if (!isLoopback(target.host) && !values.allowRemote) {
        await target.stop();
        throw new UsageError(`the spawned bridge listens on ${target.host}: ${new RemoteRefused(target.host).message}`);
      }
    } else {
      target = await embeddedTarget(deps.builtIn!, token);
    }
  } catch (err) {
    if (!(err instanceof TargetError)) throw err;
    unreachable = redact.text(err.message);
    // The console says it once, as the run's root cause; without it (the API), it is said here.
    if (io.console === false) io.err(`aicontrol-conformance: target unreachable: ${unreachable}\n`);
  }
  const targetInfo = target
    ? {
        endpoint: target.endpoint,
        spawned: target.spawned,
        label: target.label,
        ...(values.spawn ? { command: values.spawn } : {}),
      }
    : {
        endpoint: endpoint
          ? formatHostPort(endpoint.host, endpoint.port)
          : values.spawn
            ? `spawn: ${values.spawn}`
            : "built-in",
        spawned: !endpoint,
        label: "unreachable",
      };
  const replaying = caseMode === "replay";
  // A replay's verdicts come first, before the console's summary line.
  const all = replaying
    ? [replayVerdicts(human, onlyChecks, values.replay ? earlier : undefined), ...reporters(true)]
    : reporters();
  const failedReporters: string[] = [];
  let report: Report;
  try {
    report = await run({
      contract,
      checks,
      target,
      targetInfo: redact.deep(targetInfo),
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
      selected,
      onlyChecks,
      cases,
      caseMode,
      ...(caseMode === "last-failed" ? { freshSeed: randomSeed() } : {}),
      baseline,
      replayCommand: (check, finding) =>
        replayCommand(check, finding, values, endpoint, { tokenEnv, timeoutMs, runs, defaultRuns: PROFILES.standard }),
      shard,
      maxFailures: values.bail ? 1 : values.maxFailures,
      stopFlag: values.bail ? "--bail" : `--max-failures ${values.maxFailures}`,
      concurrency: values.concurrency,
      // A replay judges one case once; a fresh run grades each failure by re-sending it.
      recheck: replaying ? 0 : (values.recheck ?? OPTIONS.recheck.default),
      durationMs: values.duration,
      signal: deps.signal,
      first: deps.first,
      reporters: all,
      log: (line) => {
        const failed = /^reporter "([^"]+)" failed in onRunEnd/.exec(line);
        if (failed) failedReporters.push(failed[1]!);
        io.err(`${line}\n`);
      },
    });
  } finally {
    await target?.stop();
  }
  baselineFromRun(values, report, said);
  if (values.saveFailures) {
    const saved = saveFailures(values.saveFailures, report);
    if (saved)
      io.err(`aicontrol-conformance: saved ${saved} failing case${saved === 1 ? "" : "s"} to ${values.saveFailures}\n`);
  }
  if (values.export) {
    const options = { contract, tokenEnv, tokenConfigured: Boolean(token), timeoutMs };
    const { written, refused } = exportReproducers(values.export, report, options);
    for (const { check, reason } of refused)
      io.err(`aicontrol-conformance: --export: no reproducer of ${check}: ${reason}\n`);
    if (written.length) io.err(`aicontrol-conformance: exported ${written.length} reproducer(s) to ${values.export}\n`);
  }
  if (previous) human(describeComparison(previous, report, values.compare!));
  const lost = failedReporters.filter((name) => name in FORMATS);
  if (lost.length) {
    io.err(`aicontrol-conformance: the ${lost.join(", ")} report could not be written (see above)\n`);
    return { code: EXIT.usage, report };
  }
  if (unreachable || report.blocked) return { code: EXIT.unreachable, report };
  if (deps.signal?.aborted) return { code: EXIT.interrupted, report };
  // A replay that still fails says so (1); one that could not run a case claims nothing (3).
  const unreplayed = (c: { id: string; verdict: string }) =>
    onlyChecks?.has(c.id) && (c.verdict === "error" || c.verdict === "skip");
  if (
    replaying &&
    !report.rules.some((r) => r.verdict === "fail") &&
    report.rules.some((r) => r.checks.some(unreplayed))
  )
    return { code: EXIT.unreachable, report };
  return { code: verdictCode(report, baseline, contract, human, values.allowUncovered), report };
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

const randomSeed = () => Math.floor(Math.random() * 2 ** 31);

/** --last-failed: the rules that failed or could not be judged in an earlier report (all when none did). */
function lastFailed(report: Report, file: string, io: Io): string[] {
  const failed = report.rules.filter((r) => r.verdict === "fail" || r.verdict === "error").map((r) => r.id);
  if (failed.length === 0) io.err(`aicontrol-conformance: no rule failed in ${file}: running every rule\n`);
  return failed;
}

function parseShard(text: string): { index: number; count: number } {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  const [index, count] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  if (!m || count < 1 || index < 1 || index > count)
    throw new UsageError(`--shard takes I/N with 1 <= I <= N, e.g. 2/4, not "${text}"`);
  return { index, count };
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
