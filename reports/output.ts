import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { CheckReport, Report, RuleReport, Verdict } from "./types.js";

/** Where a report goes: a file, or standard output for "-" (the run's own, where it has one). */
export function writeOutput(
  file: string,
  text: string,
  stdout: (text: string) => void = (t) => process.stdout.write(t),
): void {
  if (file === "-") {
    stdout(text);
    return;
  }
  makeDirectory(dirname(file));
  writeFileSync(file, text);
}

/**
 * Creates a folder and its missing parents, one level at a time. Node 20's recursive mkdir
 * never returns where the file system refuses a new entry with ENOENT (as /proc does), so a
 * report path such as /proc/x/report.json would hang the run instead of naming the problem.
 */
export function makeDirectory(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); !existsSync(d); d = dirname(d)) {
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing) {
    try {
      mkdirSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}

/**
 * What went wrong with the target itself, to read before any single finding: a duty it
 * stopped serving (the cause of every "inconclusive" after it) and each death of a spawned bridge.
 */
export function targetNotes(report: Report): string[] {
  const notes: string[] = [];
  if (report.interrupted) {
    const checks = report.rules.flatMap((r) => r.checks);
    const cut = new Set(checks.filter((c) => c.interrupted).map((c) => c.id));
    const left = new Set(checks.filter((c) => !c.interrupted && /interrupted/.test(c.message)).map((c) => c.id)).size;
    const under = cut.size ? `${[...cut].join(", ")} was stopped while it ran (interrupted, skip); ` : "";
    notes.push(
      `The run was interrupted: ${under}${left} check${left === 1 ? "" : "s"} did not run (skip), so this report is incomplete.`,
    );
  }
  if (report.stopped)
    notes.push(
      report.stopped.after === "preflight"
        ? `The bridge completed no command before the first check (${report.stopped.detail}): it was broken before this run, and the checks that need completions could not be judged.`
        : `The bridge stopped completing commands after ${report.stopped.after} (${report.stopped.detail}): later checks that need completions could not be judged.`,
    );
  // A bridge that dies the same way again and again is said once, with its count.
  const deaths = new Map<string, { exit: string; stderr?: string; checks: string[]; times: number }>();
  for (const death of report.targetExits ?? []) {
    const key = JSON.stringify([death.exit, death.stderr ?? ""]);
    const known = deaths.get(key) ?? { exit: death.exit, stderr: death.stderr, checks: [], times: 0 };
    known.times++;
    if (death.check && !known.checks.includes(death.check)) known.checks.push(death.check);
    deaths.set(key, known);
  }
  for (const { exit, stderr, checks, times } of deaths.values()) {
    const count = times > 1 ? ` ${times} times` : "";
    const during = checks.length ? ` during ${checks.join(", ")}` : "";
    const same = times > 1 ? " (the same each time)" : "";
    notes.push(
      `The spawned bridge exited (${exit})${count}${during}${stderr ? `; its last stderr lines${same}: ${stderr}` : ""}`,
    );
  }
  return notes;
}

/**
 * How reproducible a failure proved when its minimal case was sent again, for a reader:
 * "flaky: failed again in 1 of 3 tries"; empty where it was not rechecked.
 */
export function reproducibility(check: CheckReport): string {
  const r = check.reproduced;
  if (!r) return "";
  const tries = `${r.failed} of ${r.tries} tries`;
  if (r.grade === "flaky") return `flaky: failed again in ${tries}`;
  if (r.grade === "consistent") return `reproduced in ${tries}`;
  return `not reproduced: failed again in ${tries}`;
}

/** Verdicts a reader has to act on (a failure, no verdict, a SHOULD not met), worst first. */
export const NOTABLE: readonly Verdict[] = ["fail", "error", "warn"];

/** One check that decided rules' verdicts, and every rule it decided (in report order). */
export interface DecidingCheck {
  check: CheckReport;
  rules: RuleReport[];
}

/**
 * The checks that gave the rules they cover their verdict, each once: a check covering
 * several rules (malformed UTF-8 judges both the UTF-8 rule and the parse-error rule) is one
 * finding, so reports show it once and list its rules instead of repeating it under each.
 */
export function decidingChecks(report: Report, verdicts: readonly Verdict[] = NOTABLE): DecidingCheck[] {
  const byId = new Map<string, DecidingCheck>();
  for (const rule of report.rules) {
    if (!verdicts.includes(rule.verdict)) continue;
    for (const check of rule.checks) {
      if (check.verdict !== rule.verdict) continue;
      const known = byId.get(check.id);
      if (known) known.rules.push(rule);
      else byId.set(check.id, { check, rules: [rule] });
    }
  }
  return [...byId.values()];
}

// What fast-check and the JavaScript engine add around a finding: useful to this tool's
// developers, noise to someone reading why a bridge failed (the seed, path and minimal case
// are reported in their own fields).
const INTERNAL_LINE = [
  /^\s*\{ seed: -?\d+/,
  /^\s*Counterexample: /,
  /^\s*Shrunk \d+ time\(s\)/,
  /^\s*Hint: /,
  /^\s*Encountered failures were:/,
  /^\s*Execution summary:/,
  /^\s*at (?:async )?(?:\S+ \(.*\)|\S+:\d+:\d+)\s*$/,
];
const INTERNAL_FRAGMENT = /(?:\w*Error: )?Property failed after \d+ tests?\s*/g;

/** A message as a reader needs it: without fast-check's run summary and without stack frames. */
export function cleanMessage(text: string): string {
  const lines: string[] = [];
  let cut = false;
  for (const raw of text.split(/\r?\n/)) {
    if (INTERNAL_LINE.some((p) => p.test(raw))) {
      cut = true;
      continue;
    }
    const line = raw.replace(INTERNAL_FRAGMENT, "").replace(/^\s*Got (?:error|thrown): /, "");
    if (line !== raw) cut = true;
    if (line.trim() === "" && raw.trim() !== "") continue;
    lines.push(line.trimEnd());
  }
  if (!cut) return text;
  // A first line that only introduced what was cut ("could not be run: ") reads on with the next.
  while (lines.length > 1 && /:$/.test(lines[0]!.trim()) && lines[1]!.trim() !== "") {
    lines.splice(0, 2, `${lines[0]!.trim()} ${lines[1]!.trim()}`);
  }
  return lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * Failing rules the baseline accepts, each with the baseline's reason: shown as KNOWN and
 * counted apart, so a run that passes with its known failures reads as one that passes.
 */
export function knownFailures(report: Report): Map<string, string> {
  const known = new Map<string, string>();
  for (const entry of report.baseline?.known ?? []) {
    for (const id of entry.rules ?? []) {
      const rule = report.rules.find((r) => r.id === id);
      if (rule?.verdict !== "fail" && rule?.verdict !== "error") continue;
      known.set(id, known.has(id) ? `${known.get(id)}; ${entry.reason}` : entry.reason);
    }
  }
  return known;
}
