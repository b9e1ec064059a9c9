import { readFileSync } from "node:fs";
import type { Contract } from "../protocol/contract.js";
import { yaml } from "../protocol/yaml.js";
import type { CheckReport, Report } from "../reports/types.js";
import type { Check } from "../suites/harness/check.js";
import { fileProblem } from "./files.js";
import { UsageError } from "./options.js";

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
