import { readFileSync, writeFileSync } from "node:fs";
import type { Contract } from "../protocol/contract.js";
import { yaml } from "../protocol/yaml.js";
import type { CheckReport, Report } from "../reports/types.js";
import type { Check } from "../suites/harness/check.js";
import { UsageError } from "./cli/options/value.js";
import { fileProblem } from "./files.js";

/** A known failure or a known-flaky check: a rule (short or full ID) or a check, with why it is accepted for now. */
export interface BaselineEntry {
  id: string;
  reason: string;
  kind: "rule" | "check";
  /** "failure": it fails and may; "flaky": it fails now and then, and may while the failure is graded flaky. */
  list: "failure" | "flaky";
  /** The last day (YYYY-MM-DD) the entry counts; after it, the failure fails the run again. */
  until?: string;
}
export interface Baseline {
  file: string;
  entries: BaselineEntry[];
}

const LISTS = { "known-failures": "failure", "known-flaky": "flaky" } as const;

/**
 * Reads a baseline file:
 *   known-failures:
 *     - rule: wire.utf8
 *       reason: the decoder is lenient until the rewrite lands
 *       until: 2027-03-01
 *     - check: error.parse/non-json
 *       reason: ...
 *   known-flaky:
 *     - check: error.queue-full/flood
 *       reason: the game loop stalls under load now and then
 */
export function loadBaseline(file: string, contract: Contract, checks: readonly Check[]): Baseline {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read --baseline ${file}: ${fileProblem(err)}`);
  }
  const doc = yaml().parseDocument(text);
  if (doc.errors.length)
    throw new UsageError(`--baseline ${file} is not valid YAML: ${doc.errors[0]!.message.split("\n")[0]}`);
  const data = doc.toJS() as Record<string, unknown> | null;
  const shape = `--baseline ${file} must be a mapping of known-failures and/or known-flaky, each a list of {rule|check, reason, until?}`;
  if (!data || typeof data !== "object" || Array.isArray(data)) throw new UsageError(shape);
  const unknown = Object.keys(data).find((k) => !(k in LISTS));
  if (unknown !== undefined) throw new UsageError(`${shape}; "${unknown}" is neither`);
  const entries: BaselineEntry[] = [];
  for (const [key, list] of Object.entries(LISTS)) {
    const raw = data[key];
    if (raw === undefined || raw === null) continue;
    if (!Array.isArray(raw)) throw new UsageError(`--baseline ${file}: ${key} must be a list`);
    raw.forEach((item, i) => {
      entries.push(entryOf(item as Record<string, unknown>, `--baseline ${file}, ${key} entry ${i + 1}`, list));
    });
  }
  function entryOf(e: Record<string, unknown>, where: string, list: BaselineEntry["list"]): BaselineEntry {
    if (typeof e !== "object" || e === null) throw new UsageError(`${where}: expected {rule|check, reason}`);
    const extra = Object.keys(e).filter((k) => !["rule", "check", "reason", "until"].includes(k));
    if (extra.length) throw new UsageError(`${where}: unknown key "${extra[0]}"`);
    if (typeof e.reason !== "string" || e.reason.trim() === "")
      throw new UsageError(`${where}: every entry needs a reason`);
    // YAML reads an unquoted 2027-03-01 as a date.
    const until = e.until instanceof Date ? e.until.toISOString().slice(0, 10) : e.until;
    if (
      until !== undefined &&
      (typeof until !== "string" || !/^\d{4}-\d\d-\d\d$/.test(until) || Number.isNaN(Date.parse(until)))
    )
      throw new UsageError(`${where}: until must be a date such as 2027-03-01, not ${JSON.stringify(e.until)}`);
    const dated = until ? { until } : {};
    if (typeof e.rule === "string" && e.check === undefined) {
      const id = e.rule.replace(`${contract.prefix}.`, "");
      if (!contract.rules.some((r) => r.id === id)) throw new UsageError(`${where}: no rule "${e.rule}"`);
      return { id, reason: e.reason, kind: "rule", list, ...dated };
    }
    if (typeof e.check === "string" && e.rule === undefined) {
      if (!checks.some((c) => c.id === e.check)) throw new UsageError(`${where}: no check "${e.check}"`);
      return { id: e.check, reason: e.reason, kind: "check", list, ...dated };
    }
    throw new UsageError(`${where}: give either rule or check`);
  }
  return { file, entries };
}

const failing = (v: string) => v === "fail" || v === "error";

/** Whether the baseline lists the check, or a rule of it, as known to be flaky: a grade it will read. */
export function knownFlaky(baseline: Baseline | undefined, check: Pick<Check, "id" | "rules">): boolean {
  return Boolean(
    baseline?.entries.some(
      (e) => e.list === "flaky" && (e.kind === "check" ? e.id === check.id : check.rules.includes(e.id)),
    ),
  );
}

/** What the baseline made of a run. */
export interface BaselineOutcome {
  /** Failures it accepts (known failures, and known-flaky checks that failed flakily). */
  known: BaselineEntry[];
  /** Known failures that pass now: to remove. */
  stale: BaselineEntry[];
  /** Entries past their until date: their failures count again. */
  expired: BaselineEntry[];
  /** Known-flaky entries whose failure came back every time it was re-sent: a real failure now. */
  consistent: BaselineEntry[];
  /** Failing rules no entry accepts. */
  unexpected: string[];
}

/** Which failures the baseline accepts, which entries are stale or expired, and what still fails the run. */
export function applyBaseline(
  report: Report,
  baseline: Baseline,
  prefix: string,
  today = new Date().toISOString().slice(0, 10),
): BaselineOutcome {
  const expired = baseline.entries.filter((e) => e.until !== undefined && e.until < today);
  const live = baseline.entries.filter((e) => !expired.includes(e));
  const checksOf = (entry: BaselineEntry) =>
    entry.kind === "rule"
      ? report.rules.filter((r) => r.id === `${prefix}.${entry.id}`).flatMap((r) => r.checks)
      : report.rules.flatMap((r) => r.checks.filter((c) => c.id === entry.id));
  const accepts = (entry: BaselineEntry, check: CheckReport) =>
    entry.list === "failure" || check.reproduced?.grade === "flaky";
  const covered = (ruleId: string, check: CheckReport) =>
    live.some((e) => (e.kind === "rule" ? `${prefix}.${e.id}` === ruleId : e.id === check.id) && accepts(e, check));
  const known: BaselineEntry[] = [];
  const stale: BaselineEntry[] = [];
  const consistent: BaselineEntry[] = [];
  for (const entry of live) {
    const checks = checksOf(entry);
    const failed = checks.filter((c) => failing(c.verdict));
    if (failed.some((c) => accepts(entry, c))) known.push(entry);
    else if (failed.length && entry.list === "flaky") consistent.push(entry);
    else if (entry.list === "failure" && checks.some((c) => c.verdict === "pass" || c.verdict === "warn"))
      stale.push(entry);
  }
  const unexpected = report.rules
    .filter((r) => failing(r.verdict))
    .filter((r) => !r.checks.filter((c) => failing(c.verdict)).every((c) => covered(r.id, c)) || !r.checks.length)
    .filter((r) => !(r.checks.length === 0 && live.some((e) => e.kind === "rule" && `${prefix}.${e.id}` === r.id)))
    .map((r) => r.id);
  return { known, stale, expired, consistent, unexpected };
}

/** The report's record of the baseline: what it accepted, and which entries are stale, expired or no longer flaky. */
export function baselineSection(report: Report, baseline: Baseline, prefix: string): NonNullable<Report["baseline"]> {
  const { known, stale, expired, consistent, unexpected } = applyBaseline(report, baseline, prefix);
  const strip = ({ id, reason, until }: BaselineEntry) => ({ id, reason, ...(until ? { until } : {}) });
  // The failing rules the baseline accepts whole, by the entries that accept them: a reader
  // shows them as known failures, apart from the failures that count.
  const accepted = report.rules.filter((r) => failing(r.verdict) && !unexpected.includes(r.id));
  const covers = (entry: BaselineEntry, rule: Report["rules"][number]) =>
    entry.kind === "rule"
      ? rule.id === `${prefix}.${entry.id}`
      : rule.checks.some((c) => c.id === entry.id && failing(c.verdict));
  const withRules = (entry: BaselineEntry) => {
    const rules = accepted.filter((r) => covers(entry, r)).map((r) => r.id);
    return { ...strip(entry), ...(rules.length ? { rules } : {}) };
  };
  return {
    file: baseline.file,
    known: known.map(withRules),
    stale: stale.map(strip),
    ...(expired.length ? { expired: expired.map(strip) } : {}),
    ...(consistent.length ? { consistent: consistent.map(strip) } : {}),
  };
}

/** The baseline's expiry when --baseline-until is not given: this many days from today. */
export const BASELINE_DAYS = 90;

/**
 * A baseline of a report's failures, in the format loadBaseline reads: each failing check (its
 * rule where no check failed), a failure graded flaky as known-flaky, every entry until `until`.
 */
export function baselineOf(report: Report, until: string, source: string): { text: string; entries: number } {
  const entry = (key: "rule" | "check", id: string, why: string) => ({
    [key]: id,
    reason: `${why} (${source}, seed ${report.seed})`,
    until,
  });
  const lists = { "known-failures": [] as object[], "known-flaky": [] as object[] };
  const seen = new Set<string>();
  for (const rule of report.rules.filter((r) => failing(r.verdict))) {
    const checks = rule.checks.filter((c) => failing(c.verdict));
    if (!checks.length) lists["known-failures"].push(entry("rule", rule.id, rule.reason ?? rule.verdict));
    for (const c of checks) {
      if (seen.has(c.id)) continue;
      seen.add(c.id);
      const list = c.reproduced?.grade === "flaky" ? "known-flaky" : "known-failures";
      lists[list].push(entry("check", c.id, c.message.split("\n")[0]!));
    }
  }
  const data = Object.fromEntries(Object.entries(lists).filter(([, list]) => list.length));
  const head = [
    `# Known failures of ${report.target.command ?? report.target.endpoint ?? report.target.label ?? "the target"}, written by --write-baseline.`,
    "# Read with --baseline. Put the real reason in each entry; it fails the run again after its until date.",
  ].join("\n");
  const body = Object.keys(data).length ? yaml().stringify(data, { lineWidth: 0 }) : "{}\n";
  return { text: `${head}\n${body}`, entries: lists["known-failures"].length + lists["known-flaky"].length };
}

/** Writes baselineOf(report) to `file`; returns how many entries it holds. */
export function writeBaseline(file: string, report: Report, until: string | undefined, source: string): number {
  const day = until ?? new Date(Date.now() + BASELINE_DAYS * 86_400_000).toISOString().slice(0, 10);
  const { text, entries } = baselineOf(report, day, source);
  try {
    writeFileSync(file, text);
  } catch (err) {
    throw new UsageError(`cannot write --write-baseline ${file}: ${fileProblem(err)}`);
  }
  return entries;
}

/** --baseline-until, checked before the run: a date, and only beside --write-baseline. */
export function checkUntil(values: { writeBaseline?: string; baselineUntil?: string }): void {
  const until = values.baselineUntil;
  if (until === undefined) return;
  if (!values.writeBaseline)
    throw new UsageError("--baseline-until dates the entries --write-baseline FILE writes: give it too");
  if (!/^\d{4}-\d\d-\d\d$/.test(until) || Number.isNaN(Date.parse(until)))
    throw new UsageError(`--baseline-until must be a date such as 2027-03-01, not ${JSON.stringify(until)}`);
}

/** --write-baseline after a run, a replay or a merge: the file, and a line saying what it holds. */
export function baselineFromRun(
  values: { writeBaseline?: string; baselineUntil?: string; replay?: string },
  report: Report,
  say: (line: string) => void,
): void {
  if (!values.writeBaseline) return;
  const when = `failed ${report.startedAt.slice(0, 10)}${values.replay ? ` in a replay of ${values.replay}` : ""}`;
  const entries = writeBaseline(values.writeBaseline, report, values.baselineUntil, when);
  say(`wrote ${entries} baseline entr${entries === 1 ? "y" : "ies"} to ${values.writeBaseline}`);
}
