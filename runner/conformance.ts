// One run, from option values to an exit code and a report. The CLI and the API both come
// here; neither argv nor signal handlers nor unasked-for files are this module's business.
import { randomBytes } from "node:crypto";
import { contract as shipped } from "../protocol/contract.js";
import { consoleReporter, FORMATS, githubReporter, markdownReporter } from "../reports/index.js";
import type { Report } from "../reports/types.js";
import { formatHostPort } from "../suites/harness/connection.js";
import { redactor, STRONG_TOKEN_LENGTH } from "../suites/harness/redact.js";
import { allChecks } from "../suites/index.js";
import type { Case } from "./attempt.js";
import { loadBaseline } from "./baseline.js";
import { clientCommand } from "./cli/commands/client.js";
import { compareAfter, compareCommand } from "./cli/commands/compare.js";
import { exportCommand } from "./cli/commands/export.js";
import { listCommand } from "./cli/commands/list.js";
import { mergeCommand } from "./cli/commands/merge.js";
import { readContract, readReportFile } from "./cli/inputs.js";
import { OPTIONS, PROFILES, type Profile, TIME_BUDGET } from "./cli/options/table.js";
import { UsageError } from "./cli/options/value.js";
import { type Deps, EXIT, type Io, type Outcome, type Values, verdictCode } from "./cli/outcome.js";
import { ruleSelector, validateGlobs } from "./cli/rules.js";
import { corpusCases, loadCorpus, saveFailures } from "./corpus.js";
import { checkDirectories, checkWritable, reportOutputs } from "./outputs.js";
import { failingCases, replayCommand, replayTarget, replayVerdicts } from "./replay.js";
import { run } from "./run.js";
import { namedChecks } from "./selection.js";
import {
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
  if (values.list) return listCommand(values, contract, selected, io);
  const outputs = reportOutputs(values);
  const toStdout = outputs.some((o) => o.file === "-");
  // A report on stdout keeps stdout for itself: the human output goes to stderr.
  const human = toStdout ? io.err : io.out;
  const baseline = values.baseline ? loadBaseline(values.baseline, contract, checks) : undefined;
  const reporters = () => [
    ...(io.console === false
      ? []
      : [consoleReporter({ write: human, verbose: values.verbose, quiet: values.quiet, live: io.live ?? false })]),
    ...outputs.map((o) => FORMATS[o.format]!.create(o.file, io.out)),
    ...(io.env.GITHUB_STEP_SUMMARY ? [markdownReporter(undefined, io.env)] : []),
    ...(io.env.GITHUB_ACTIONS === "true" ? [githubReporter(human, io.env)] : []),
  ];

  if (positionals[0] === "client") return clientCommand(values, positionals.slice(1), io, deps, reporters);
  if (values.exec) throw new UsageError('--exec tests a client: run "aicontrol-conformance client --exec CMD"');
  if (values.compare && positionals.length === 1 && !values.merge)
    return compareCommand(values.compare, positionals[0]!, io);
  if (positionals.length && !values.merge) {
    throw new UsageError(
      `unexpected argument "${positionals[0]}" (only --merge and --compare OLD NEW take file names)`,
    );
  }
  const afterward = compareAfter(values.compare, human);
  if (values.merge)
    return mergeCommand(values, { files: positionals, contract, baseline, outputs, reporters, human, afterward }, io);

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
    io.err(`aicontrol-conformance: target unreachable: ${unreachable}\n`);
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
  const all = reporters();
  if (replaying) all.push(replayVerdicts(human, onlyChecks, values.replay ? earlier : undefined));
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
  if (values.saveFailures) {
    const saved = saveFailures(values.saveFailures, report);
    if (saved)
      io.err(`aicontrol-conformance: saved ${saved} failing case${saved === 1 ? "" : "s"} to ${values.saveFailures}\n`);
  }
  if (values.export)
    exportCommand(values.export, report, { contract, tokenEnv, tokenConfigured: Boolean(token), timeoutMs }, io);
  afterward(report);
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

export { TOOL };
