// A check's property run by fast-check on a harness: the classes first (after the first, judged together where they
// settle), generated cases within the check's share of the wait on the game loop, shrinking on fresh bridges, an
// exact case replayed alone; what the cases found as they ran, and the finding the run comes to.
import fc from "fast-check";
import type { CommandLedger, Finding, PropertyOptions } from "./check.js";
import type { WireStats } from "./connection.js";
import type { Endpoint } from "./endpoint.js";

/** A property's generated cases may wait on the game loop for 1/WAIT_SHARE of the profile's time budget. */
const WAIT_SHARE = 20;

/** What a property asks of the harness it runs on (the Harness is one). */
export interface PropertyHost {
  readonly runs: number;
  readonly timeBudgetMs: number;
  readonly timeoutMs: number;
  readonly deadline: number;
  readonly seed: number;
  /** Replays exactly this case of the property. */
  readonly path?: string;
  readonly replayPath?: string;
  readonly endpoint: Endpoint;
  readonly stats?: WireStats;
  readonly ledger?: CommandLedger;
  /** Time the check has waited for completions so far. */
  readonly waitedMs: number;
  /** The check is over: a late continuation must not touch the bridge. */
  readonly stopped: boolean;
  /** Over, or past its deadline. */
  readonly expired: boolean;
  /** One case with a fresh transcript, violations and faults made findings. */
  runCase(body: () => Promise<Finding>): Promise<Finding>;
  /** Whether the bridge still answers ping on a fresh connection; restarts an owned one that does not. */
  alive(): Promise<boolean>;
}

/**
 * Runs `judge` on the arbitrary's cases as fast-check draws them, the examples (the classes) first, and comes to the
 * property's finding: a failure shrunk on fresh bridges where this tool owns the bridge, or the exact case replayed.
 */
export async function runProperty<T>(
  host: PropertyHost,
  arbitrary: fc.Arbitrary<T>,
  judge: (input: T) => Promise<Finding>,
  options: PropertyOptions<T> = {},
): Promise<Finding> {
  const run: PropertyRun = { index: 0, restartsFrom: 0, notRun: 0, cut: 0 };
  const restart = host.endpoint.restart?.bind(host.endpoint);
  // An exact replay runs the one case at its path, once: fast-check would otherwise go on to the
  // cases after it and shrink whatever fails there, and call a different case the same failure.
  const exact = host.path !== undefined;
  // A failure may leave a bridge we cannot restart broken: shrinking would then chase a different fault.
  const noShrink = exact || (options.restartAfterFailure && !restart);
  // Generated cases after the classes wait on the game loop for no more than the check's share of the
  // profile's time budget: a bridge that completes a command per game tick gets fewer random cases, and the
  // finding says so, rather than a run many times longer. The classes always run whole.
  const classes = options.examples?.length ?? 0;
  const waitShare = Math.round(host.timeBudgetMs / WAIT_SHARE / (options.sharedBy ?? 1));
  const waitedBefore = host.waitedMs;
  // The first class runs alone (a bridge failing it is judged with nothing beside it); the others may settle.
  const settles = !exact && restart && options.settle && classes > 2 ? restart : undefined;
  let settled = 0;
  // Leave time to finish the case under way and report: no case starts past half of what is left (or past two
  // timeouts before the deadline, if later). This is fast-check's interruptAfterTimeLimit without its race, which
  // would leave the case under way running beside the next one on this harness's connections, each closing the
  // other's and reading that as a bridge that stopped answering.
  const stopCasesAt =
    Date.now() + Math.max(1, (host.deadline - Date.now()) / 2, host.deadline - Date.now() - host.timeoutMs * 2);
  const result = await fc.check(
    fc.asyncProperty(arbitrary, async (input) => {
      if (run.inconclusive) return true; // stop shrinking towards a harness fault
      if (Date.now() >= stopCasesAt) throw new fc.PreconditionFailure(true);
      if (exact) {
        if (run.ran !== undefined) return true;
        run.ran = "";
      }
      const at = run.failure ? undefined : String(run.index++);
      if (at === "1" && settles) settled = 1 + (await settle(host, options, settles));
      if (at !== undefined && Number(at) < settled) return true; // judged together with the other classes
      if (!exact && at !== undefined && Number(at) >= classes && host.waitedMs - waitedBefore > waitShare) {
        run.notRun++;
        return true;
      }
      // Once shrinking, every attempt starts on a freshly started bridge: a minimal case that replays alike.
      if (run.failure && options.restartAfterFailure) await restart?.();
      const finding = await host.runCase(() => caseFinding(host, judge, input, options.liveness));
      // Named once it ran: a stateful case prints the commands it ran.
      if (exact) run.ran = fc.stringify(input);
      return tally(host, run, finding, input, at, exact);
    }),
    {
      numRuns: options.runs ?? host.runs,
      examples: (options.examples ?? []).map((e) => [e] as [T]),
      seed: host.seed,
      ...(host.path ? { path: host.path } : {}),
      markInterruptAsFailure: false,
      endOnFailure: noShrink,
    },
  );
  if (run.shrinkFrom !== undefined && host.stats) {
    host.stats.shrinkingMs += Date.now() - run.shrinkFrom;
    host.stats.shrinkRestartsMs += (host.endpoint.restartMs ?? 0) - run.restartsFrom;
  }
  // Leave the bridge as healthy as it was found for the checks after this one.
  if (run.failure && options.restartAfterFailure && !host.stopped) await restart?.();
  if (run.inconclusive) return run.inconclusive;
  if (exact) return replayed(host, run.ran, run.failure ?? run.warning, result.errorInstance);
  return propertyFinding(result, run, {
    noShrink,
    waitShare,
    seed: host.seed,
    ledger: host.ledger,
  });
}

/** PropertyOptions.settle of the classes after the first: how many passed (none on a fault or a warning). */
async function settle<T>(
  host: PropertyHost,
  options: PropertyOptions<T>,
  restart: () => Promise<void>,
): Promise<number> {
  const [examples, settle] = [options.examples?.slice(1) ?? [], options.settle];
  if (!settle) return 0;
  let settled: number | undefined = 0; // a fault part-way tried some: none settled
  const finding = await host.runCase(async () => {
    settled = await settle(examples);
    return { verdict: "pass", message: "settled together" };
  });
  if (settled === undefined) return 0;
  if (finding.verdict !== "pass") settled = 0;
  if (settled < examples.length && !host.expired) await restart(); // those left run alone, on a fresh bridge
  return settled;
}

/** One case of a property judged; with `liveness`, a pass is a failure where the bridge then stops answering. */
async function caseFinding<T>(
  host: PropertyHost,
  judge: (input: T) => Promise<Finding>,
  input: T,
  liveness: boolean | undefined,
): Promise<Finding> {
  const f = await judge(input);
  if (!liveness) return f;
  const alive = await host.alive(); // also restarts an owned bridge, so shrinking starts clean
  if (f.verdict !== "fail" && !alive) {
    return {
      verdict: "fail" as const,
      message: "The bridge stopped answering ping on a fresh connection after this input.",
      expected: "the bridge keeps serving after any input",
      actual: "no answer to ping on a new connection",
      oracle: { kind: "alive" as const },
    };
  }
  return f;
}

/** A case's finding counted in `run`: whether the property holds for it, as fast-check asks. */
function tally<T>(
  host: PropertyHost,
  run: PropertyRun,
  finding: Finding,
  input: T,
  at: string | undefined,
  exact: boolean,
): boolean {
  if (finding.verdict === "error") {
    // A case the check's deadline cut short was not judged: it is not counted as passed, and an exact
    // replay cut short replayed nothing.
    if (!host.expired || exact) run.inconclusive = finding;
    else run.cut++;
    return true;
  }
  if (finding.verdict === "fail") {
    run.failure = finding;
    if (run.shrinkFrom === undefined) {
      run.shrinkFrom = Date.now();
      run.restartsFrom = host.endpoint.restartMs ?? 0;
    }
    return false;
  }
  if (finding.verdict === "warn" && !run.warning) {
    run.warning = { ...finding, counterexample: finding.counterexample ?? fc.stringify(input) };
    run.warningPath = at;
  }
  return true;
}

/** The finding of an exact replay: the one case at the path, named whatever its verdict. */
function replayed(host: PropertyHost, ran: string | undefined, found: Finding | undefined, error: unknown): Finding {
  const { seed, path, replayPath } = host;
  // A replay that ran no case did not replay anything: that is not a fix.
  if (ran === undefined)
    return {
      verdict: "error",
      message: `the case could not be replayed (seed ${seed}, path ${path}): ${String(error ?? "no case ran")}`,
    };
  const finding = found ?? { verdict: "pass" as const, message: "The replayed case passed." };
  return { ...finding, counterexample: ran, seed, path, ...(replayPath ? { replayPath } : {}) };
}

/** What a property's cases found as they ran: the first failure, warning and unjudged case, and counts. */
interface PropertyRun {
  failure?: Finding;
  warning?: Finding;
  /** A case that could reach no verdict ends the property with that finding. */
  inconclusive?: Finding;
  /** The case an exact replay ran, named once it ran ("" while it runs). */
  ran?: string;
  /** Which generated case this is, while no case has failed: the path of a warning's case. */
  index: number;
  warningPath?: string;
  /** When the first failure was found: what follows is shrinking. */
  shrinkFrom?: number;
  restartsFrom: number;
  /** Generated cases not run: waiting on the game loop took the check's share of the time budget. */
  notRun: number;
  /** Cases the check's deadline cut short. */
  cut: number;
}

/** How the property ran, for its finding: whether it was shrunk, its share of the wait, its seed. */
interface PropertyTerms {
  noShrink?: boolean;
  waitShare: number;
  seed: number;
  ledger?: CommandLedger;
}

/** fast-check's run of a property, and what its cases found, made the property's finding. */
function propertyFinding<T>(
  result: fc.RunDetails<[T]>,
  run: PropertyRun,
  { noShrink, waitShare, seed, ledger }: PropertyTerms,
): Finding {
  const { failure, warning, warningPath, notRun, cut } = run;
  if (result.failed && failure) {
    const note = noShrink
      ? " (not shrunk: a bridge at an endpoint cannot be restarted between attempts, so this is the first failing case)"
      : "";
    const counterexample = fc.stringify(result.counterexample?.[0]);
    const replayPath = /\/\*replayPath="([^"]*)"\*\//.exec(counterexample)?.[1];
    return {
      ...failure,
      message: failure.message + note,
      counterexample,
      seed: result.seed,
      path: result.counterexamplePath ?? undefined,
      ...(replayPath ? { replayPath } : {}),
    };
  }
  if (result.failed && result.interrupted)
    return {
      verdict: "error",
      message: `no generated case finished within the check's deadline (${result.numRuns} ran)`,
      unjudged: { cause: "deadline" },
    };
  if (result.failed)
    return {
      verdict: "error",
      message: `the property could not be run: ${String(result.errorInstance ?? "unknown error")}`,
    };
  const judged = result.numRuns - notRun - cut;
  if (judged <= 0 && (cut || result.interrupted))
    return {
      verdict: "error",
      message: `no generated case finished within the check's deadline (${cut} cut short)`,
      unjudged: { cause: "deadline" },
    };
  // A warning names its case exactly, so that a replay judges that case and no other.
  if (warning) return warningPath === undefined ? warning : { ...warning, seed, path: warningPath };
  const note =
    result.interrupted || cut
      ? ` (interrupted by the deadline after ${judged} cases${cut ? `, ${cut} more cut short` : ""})`
      : "";
  const paced = notRun
    ? ` (${notRun} more not run: waiting on the game loop took this check's ${waitShare} ms share of the ` +
      `profile's time budget${ledger ? `; its slowest step took ${Math.round(ledger.slowestStepMs)} ms` : ""})`
    : "";
  return { verdict: "pass", message: `${judged} generated cases passed${paced}${note}.` };
}
