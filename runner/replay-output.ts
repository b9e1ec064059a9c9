// What a replay prints: its verdict per case first, one line each, then the detail of each case
// that did not pass. The console reporter adds only the target's notes and the summary line.
import { worst } from "../protocol/verdict.js";
import { cleanMessage } from "../reports/output.js";
import type { CheckReport, Report, Reporter } from "../reports/types.js";

/** What a replayed check's verdict now says about the case it replayed. */
const REPLAY_LABEL: Record<string, string> = {
  fail: "STILL FAILING",
  warn: "STILL WARNS",
  error: "COULD NOT REPLAY",
  skip: "COULD NOT REPLAY",
  pass: "FIXED",
};

/** Each replayed check once, by its worst entry across the rules it covers. */
function worstOf(report: Report, only: Set<string> | undefined): Map<string, CheckReport> {
  const entries = new Map<string, CheckReport>();
  for (const check of report.rules.flatMap((r) => r.checks)) {
    if (only && !only.has(check.id)) continue;
    const known = entries.get(check.id);
    if (!known || worst(known.verdict, check.verdict) !== known.verdict) entries.set(check.id, check);
  }
  return entries;
}

/** The replay's text: a verdict line per case, then, for each case not fixed, what it ran and got before and now. */
export function formatReplay(report: Report, only?: Set<string>, before?: Report): string {
  const now = worstOf(report, only);
  const then = before ? worstOf(before, only) : new Map<string, CheckReport>();
  const lines = [...now].map(([id, c]) => `${REPLAY_LABEL[c.verdict]} ${id}`);
  for (const [id, c] of now) {
    if (c.verdict === "pass") continue;
    const message = cleanMessage(c.message).split("\n")[0];
    lines.push("", `${REPLAY_LABEL[c.verdict]} ${id}: ${message}`);
    const ran = c.replayed?.case ?? c.counterexample;
    if (ran !== undefined) lines.push(`    case:     ${ran}`);
    if (c.expected !== undefined) lines.push(`    expected: ${c.expected}`);
    const old = then.get(id);
    if (old) lines.push(`    before:   ${old.actual ?? old.message}`);
    if (c.actual !== undefined || old) lines.push(`    now:      ${c.actual ?? c.message}`);
    if (c.replay !== undefined) lines.push(`    replay:   ${c.replay}`);
  }
  return `${lines.join("\n")}\n`;
}

/** After a replay: the verdicts and details of formatReplay, before the summary line. */
export function replayVerdicts(out: (t: string) => void, only: Set<string> | undefined, before?: Report): Reporter {
  return {
    name: "replay",
    onRunEnd(report) {
      out(formatReplay(report, only, before));
    },
  };
}
