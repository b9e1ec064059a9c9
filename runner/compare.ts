import { VERDICT_ORDER } from "../protocol/verdict.js";
import type { Report } from "../reports/types.js";

export interface VerdictChange {
  id: string;
  from: string;
  to: string;
  worse: boolean;
}

/** The rules whose verdict changed from one report to the next: the reviewer's regression view. */
export function compareReports(before: Report, after: Report): VerdictChange[] {
  const old = new Map(before.rules.map((r) => [r.id, r.verdict]));
  return after.rules.flatMap((r) => {
    const from = old.get(r.id) ?? "absent";
    if (from === r.verdict) return [];
    const worse =
      (r.verdict === "fail" || r.verdict === "error") &&
      VERDICT_ORDER.indexOf(r.verdict) < VERDICT_ORDER.indexOf(from as never);
    return [{ id: r.id, from, to: r.verdict, worse }];
  });
}

export function formatChanges(changes: VerdictChange[], label: string): string {
  if (changes.length === 0) return `No rule changed verdict since ${label}.\n`;
  return (
    `Rules whose verdict changed since ${label}:\n` +
    changes
      .map(
        (c) => `  ${c.worse ? "REGRESSED" : c.to === "pass" ? "IMPROVED " : "CHANGED  "} ${c.id}: ${c.from} -> ${c.to}`,
      )
      .join("\n") +
    "\n"
  );
}
