import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { stripVTControlCharacters } from "node:util";
import { Ajv } from "ajv";
import type { ReferenceBridge } from "../bridges/reference/bridge.js";
import { ReferenceBridge as Reference } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import type { Report, Reporter } from "../reports/types.js";
import type { Baseline } from "../runner/baseline.js";
import { PROFILES, type Profile, TIME_BUDGET } from "../runner/cli/options/table.js";
import { ruleSelector } from "../runner/cli/rules.js";
import { main } from "../runner/cli.js";
import { type ClientRunOptions, runClientMode } from "../runner/client.js";
import { type RunOptions, run } from "../runner/run.js";
import { embeddedTarget } from "../runner/targets.js";
import type { Check } from "../suites/harness/check.js";
import { allChecks } from "../suites/index.js";

export const TEST_TOKEN = "conformance-test-token-7f3a";

const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addFormat("date-time", (s: string) => /^\d{4}-\d\d-\d\dT/.test(s) && !Number.isNaN(Date.parse(s)));
const validate = ajv.compile(
  JSON.parse(readFileSync(new URL("../reports/report.schema.json", import.meta.url), "utf8")) as object,
);

/** Every report a test produces is checked against the shipped JSON Schema. */
export function assertValidReport(report: unknown): Report {
  if (!validate(report))
    throw new Error(`report does not match reports/report.schema.json: ${ajv.errorsText(validate.errors)}`);
  return report as Report;
}

/** Reads a JSON report a run wrote, and validates it. */
export function readReport(file: string): Report {
  return assertValidReport(JSON.parse(readFileSync(file, "utf8")));
}

export interface SuiteRun {
  /** Known failures (--baseline). */
  baseline?: Baseline;
  /** Rule globs to run (default: all). */
  rules?: string[];
  token?: string;
  runs?: number;
  timeoutMs?: number;
  seed?: number;
  checks?: readonly Check[];
  reporters?: Reporter[];
  strict?: boolean;
  /** Rules whose checks run first. */
  first?: string[];
  /** Re-send each failing minimal case this many times (default 0: off, for speed). */
  recheck?: number;
  /** Checks at a time (default: the run's own choice). */
  concurrency?: number;
  /** Exact cases, and how the run uses them (see RunOptions). */
  cases?: RunOptions["cases"];
  caseMode?: RunOptions["caseMode"];
  freshSeed?: number;
  log?: (line: string) => void;
  /** Run as a profile of the CLI does: its run count and its time budget for slow checks. */
  profile?: Profile;
  /** Fuzz on with fresh seeds until this much time has passed since the start. */
  durationMs?: number;
  /** What a slow check may spend (default 20 s). */
  timeBudgetMs?: number;
  /** As a spawned bridge: each start takes this long, and a restart swaps in one started ahead. */
  startMs?: number;
  /** Further bridges to deal the run among (RunOptions.lanes). */
  lanes?: RunOptions["lanes"];
}

/** Runs the suite in-process against a bridge the test builds (restarted when a check kills it). */
export async function runSuite(
  make: (token: string) => ReferenceBridge = (token) => new Reference({ token }),
  o: SuiteRun = {},
): Promise<Report> {
  const token = o.token ?? TEST_TOKEN;
  const target = await embeddedTarget(
    ({ port }) => {
      const bridge = make(token);
      bridge.options.port = port;
      return bridge;
    },
    token,
    "test bridge",
  );
  if (o.startMs !== undefined) target.startMs = o.startMs;
  try {
    return assertValidReport(
      await run({
        contract,
        checks: o.checks ?? allChecks,
        target,
        token: token || undefined,
        tokenEnv: "TEST_TOKEN",
        targetInfo: { endpoint: target.endpoint, spawned: true, label: target.label },
        timeoutMs: o.timeoutMs ?? 1000,
        checkDeadlineMs: 30_000,
        timeBudgetMs: o.timeBudgetMs ?? (o.profile ? TIME_BUDGET[o.profile] : 20_000),
        runs: o.runs ?? (o.profile ? PROFILES[o.profile] : 12),
        seed: o.seed ?? 42,
        profile: o.profile ?? "test",
        strict: o.strict ?? false,
        selected: ruleSelector(o.rules ?? [], [], contract),
        ...(o.first ? { first: new Set(o.first) } : {}),
        recheck: o.recheck ?? 0,
        ...(o.baseline ? { baseline: o.baseline } : {}),
        ...(o.concurrency ? { concurrency: o.concurrency } : {}),
        ...(o.cases ? { cases: o.cases, caseMode: o.caseMode ?? "replay" } : {}),
        ...(o.freshSeed !== undefined ? { freshSeed: o.freshSeed } : {}),
        ...(o.durationMs ? { durationMs: o.durationMs } : {}),
        ...(o.lanes ? { lanes: o.lanes } : {}),
        reporters: o.reporters ?? [],
        log: o.log ?? (() => {}),
      }),
    );
  } finally {
    await target.stop();
  }
}

/** A report without what varies from run to run (times, ports, dates): what two runs must agree on. */
export function verdicts(report: Report) {
  return report.rules.map((r) => ({
    id: r.id,
    verdict: r.verdict,
    checks: r.checks
      .map((c) => ({ id: c.id, verdict: c.verdict, counterexample: c.counterexample, seed: c.seed, path: c.path }))
      .sort((a, b) => a.id.localeCompare(b.id)),
  }));
}

export function verdictOf(report: Report, shortId: string): string {
  const rule = report.rules.find((r) => r.id === `${contract.prefix}.${shortId}`);
  if (!rule) throw new Error(`no rule ${shortId} in report`);
  return rule.verdict;
}

/** Rules that did not pass or skip, with their first message: for readable assertion failures. */
export function problems(report: Report): string[] {
  return report.rules
    .filter((r) => r.verdict === "fail" || r.verdict === "error")
    .map((r) => `${r.id}: ${r.verdict}: ${r.checks.find((c) => c.verdict === r.verdict)?.message}`);
}

/** Runs the CLI in-process; output without colour codes (picocolors colours under CI). */
export async function cli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io = {
    out: (t: string) => {
      out += t;
    },
    err: (t: string) => {
      err += t;
    },
    env,
  };
  const code = await main(args, io, { builtIn: (options) => new Reference(options) });
  return { code, out: stripVTControlCharacters(out), err: stripVTControlCharacters(err) };
}

/**
 * Runs the CLI as a process and sends it one Ctrl-C `afterMs` after its console first shows `begun` (its checks have
 * begun); its exit code and what it printed.
 */
export async function interruptedCli(
  args: string[],
  begun: string | RegExp,
  afterMs: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ["dist/bin.js", ...args], { stdio: ["ignore", "pipe", "pipe"], env });
  let out = "";
  let sent = false;
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    if (sent || !(typeof begun === "string" ? out.includes(begun) : begun.test(out))) return;
    sent = true;
    setTimeout(() => child.kill("SIGINT"), afterMs);
  });
  child.stderr.resume();
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, out };
}

/**
 * Waits until `done()` holds, looking every few milliseconds; past `ms`, fails with `explain()` (what the peer said
 * so far), so a peer that never gets there fails its test with the reason rather than with the test's timeout.
 */
export async function until(done: () => boolean, explain: () => string, ms = 10_000): Promise<void> {
  const giveUp = Date.now() + ms;
  while (!done()) {
    if (Date.now() > giveUp) throw new Error(explain());
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A client-mode run as the tests make it: every rule, a 1 s client timeout, seed 7, quiet; `o` overrides. */
export function runClientSuite(command: string, o: Partial<ClientRunOptions> = {}): Promise<Report> {
  return runClientMode({
    contract,
    command,
    clientTimeoutMs: 1000,
    seed: 7,
    runs: 5,
    strict: false,
    selected: () => true,
    env: { PATH: process.env.PATH },
    reporters: [],
    log: () => {},
    ...o,
  });
}

/** A gate that lets `limit` pieces of work run at a time, the rest waiting in the order they came. */
export function limiter(limit: number): <R>(work: () => Promise<R>) => Promise<R> {
  let free = limit;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (free > 0) free--;
    else await new Promise<void>((go) => waiting.push(go));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

/**
 * Runs `work` over `items`, `limit` at a time, in order; one promise per item. None is left unhandled: a test
 * that awaits its own still sees it reject.
 */
export function pooled<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R>[] {
  const slot = limiter(limit);
  const all = items.map((item) => slot(() => work(item)));
  for (const p of all) p.catch(() => {});
  return all;
}
