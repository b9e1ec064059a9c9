// What --export writes for the checks that record no machine oracle, as the checks themselves say.
import { allChecks } from "../../../suites/index.js";

/** The checks without a machine oracle, each with the reason it gives: their reproducers compare replies instead. */
export function checksWithoutOracle(): { id: string; reason: string }[] {
  return allChecks.flatMap((c) => (c.noOracle ? [{ id: c.id, reason: c.noOracle }] : []));
}

/** The checks whose failures their replay command reproduces rather than a standalone script, each with why. */
export function checksReplayedOnly(): { id: string; reason: string }[] {
  return allChecks.flatMap((c) => (c.replayOnly ? [{ id: c.id, reason: c.replayOnly }] : []));
}

/** What --export does for the checks without a machine oracle (exit 3 on a changed reply), from the checks themselves. */
export function withoutOracle(): string {
  const replayed = checksReplayedOnly().map((c) => c.id);
  const script = replayed.length ? `; no script for ${replayed.join(", ")} (its replay command reproduces it)` : "";
  return withoutOracleOnly() + script;
}

export function withoutOracleOnly(): string {
  const listed = checksWithoutOracle();
  if (!listed.length) return "every check records its oracle, so 3 (changed: judge it yourself) is left for none";
  return `3 changed (judge it yourself) only for the checks without an oracle: ${listed
    .map((c) => `${c.id} (${c.reason})`)
    .join("; ")}`;
}
