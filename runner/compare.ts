import { VERDICT_ORDER } from "../protocol/verdict.js";
import type { Report } from "../reports/types.js";
import { reportKey } from "./merge.js";
import { recordedCase } from "./replay.js";

export interface VerdictChange {
  id: string;
  from: string;
  to: string;
  worse: boolean;
  /**
   * A rule that failed before and passes now: whether its failing cases were run again exactly
   * and passed (--last-failed OLD, --replay OLD). Only then is it proven fixed.
   */
  sameCases?: boolean;
}

/**
 * A rule one report judged and the other did not run (skip: not selected, another shard, not
 * part of a --last-failed or --replay run): no change of the bridge's, so left out of the view.
 */
const oneSided = (from: string, to: string) => from !== to && (from === "skip" || to === "skip");

/** The rules whose verdict changed from one report to the next: the reviewer's regression view. */
export function compareReports(before: Report, after: Report): VerdictChange[] {
  const old = new Map(before.rules.map((r) => [r.id, r]));
  return after.rules.flatMap((r) => {
    const was = old.get(r.id);
    const from = was?.verdict ?? "absent";
    if (from === r.verdict || oneSided(from, r.verdict)) return [];
    const worse =
      (r.verdict === "fail" || r.verdict === "error") &&
      VERDICT_ORDER.indexOf(r.verdict) < VERDICT_ORDER.indexOf(from as never);
    const change: VerdictChange = { id: r.id, from, to: r.verdict, worse };
    if (from === "fail" && r.verdict === "pass") {
      // Every case that failed before ran again, exactly, in the new report, and passed.
      const replayedNow = new Map(r.checks.flatMap((c) => (c.replayed ? [[c.id, c.replayed] as const] : [])));
      change.sameCases = was!.checks
        .filter((c) => c.verdict === "fail")
        .every((c) => {
          const recorded = recordedCase(before, c);
          const now = replayedNow.get(c.id);
          return now?.verdict === "pass" && now.seed === recorded.seed && now.path === recorded.path;
        });
    }
    return [change];
  });
}

export function formatChanges(changes: VerdictChange[], label: string): string {
  if (changes.length === 0) return `No rule changed verdict since ${label}.\n`;
  const tag = (c: VerdictChange) =>
    c.worse ? "REGRESSED" : c.to === "pass" && c.sameCases !== false ? "IMPROVED " : "CHANGED  ";
  const note = (c: VerdictChange) =>
    c.sameCases === false
      ? ` (not judged on the same cases: its failing cases were not replayed; run --last-failed ${label} to prove it fixed)`
      : "";
  return `Rules whose verdict changed since ${label}:\n${changes.map((c) => `  ${tag(c)} ${c.id}: ${c.from} -> ${c.to}${note(c)}`).join("\n")}\n`;
}

/** The comparison as printed: the changes, what was left out, and a word when the reports are not of one target. */
export function describeComparison(before: Report, after: Report, label: string, afterLabel = "this run"): string {
  const old = new Map(before.rules.map((r) => [r.id, r.verdict]));
  const left = after.rules.filter((r) => oneSided(old.get(r.id) ?? "absent", r.verdict)).length;
  const notes: string[] = [];
  if (left)
    notes.push(`${left} rule${left === 1 ? "" : "s"} judged in one report and not run in the other (skip) left out`);
  const [a, b] = [reportKey(before), reportKey(after)];
  for (const what of Object.keys(a) as (keyof typeof a)[])
    if (a[what] !== b[what])
      notes.push(`the reports are of different ${what}s: ${label} of ${a[what]}, ${afterLabel} of ${b[what]}`);
  return formatChanges(compareReports(before, after), label) + notes.map((n) => `Note: ${n}.\n`).join("");
}
