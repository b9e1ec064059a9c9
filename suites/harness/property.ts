// What a property's cases found as they ran, and the finding fast-check's run comes to.
import fc from "fast-check";
import type { CommandLedger, Finding } from "./check.js";

/** What a property's cases found as they ran: the first failure, warning and unjudged case, and counts. */
export interface PropertyRun {
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
export interface PropertyTerms {
  noShrink?: boolean;
  waitShare: number;
  seed: number;
  ledger?: CommandLedger;
}

/** fast-check's run of a property, and what its cases found, made the property's finding. */
export function propertyFinding<T>(
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
