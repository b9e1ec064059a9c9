import { readFileSync } from "node:fs";
import { parseDocument } from "yaml";
import type { Contract } from "../protocol/contract.js";
import type { Report } from "../reports/types.js";
import type { Check } from "../suites/harness/check.js";
import { UsageError } from "./options.js";

/** A known failure: a rule (short or full ID) or a check, with why it is accepted for now. */
export interface BaselineEntry {
  id: string;
  reason: string;
  kind: "rule" | "check";
}
export interface Baseline {
  file: string;
  entries: BaselineEntry[];
}

/**
 * Reads a baseline file:
 *   known-failures:
 *     - rule: wire.utf8
 *       reason: the decoder is lenient until the rewrite lands
 *     - check: error.parse/non-json
 *       reason: ...
 */
export function loadBaseline(file: string, contract: Contract, checks: readonly Check[]): Baseline {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(
      `cannot read --baseline ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const doc = parseDocument(text);
  if (doc.errors.length)
    throw new UsageError(`--baseline ${file} is not valid YAML: ${doc.errors[0]!.message.split("\n")[0]}`);
  const data = doc.toJS() as { "known-failures"?: unknown } | null;
  const list = data?.["known-failures"];
  if (
    !data ||
    typeof data !== "object" ||
    !Array.isArray(list) ||
    Object.keys(data).some((k) => k !== "known-failures")
  ) {
    throw new UsageError(
      `--baseline ${file} must be a mapping with one key, known-failures: a list of {rule|check, reason}`,
    );
  }
  const entries = list.map((raw, i): BaselineEntry => {
    const e = raw as Record<string, unknown>;
    const where = `--baseline ${file}, entry ${i + 1}`;
    if (typeof e !== "object" || e === null) throw new UsageError(`${where}: expected {rule|check, reason}`);
    const extra = Object.keys(e).filter((k) => !["rule", "check", "reason"].includes(k));
    if (extra.length) throw new UsageError(`${where}: unknown key "${extra[0]}"`);
    if (typeof e.reason !== "string" || e.reason.trim() === "")
      throw new UsageError(`${where}: every known failure needs a reason`);
    if (typeof e.rule === "string" && e.check === undefined) {
      const id = e.rule.replace(`${contract.prefix}.`, "");
      if (!contract.rules.some((r) => r.id === id)) throw new UsageError(`${where}: no rule "${e.rule}"`);
      return { id, reason: e.reason, kind: "rule" };
    }
    if (typeof e.check === "string" && e.rule === undefined) {
      if (!checks.some((c) => c.id === e.check)) throw new UsageError(`${where}: no check "${e.check}"`);
      return { id: e.check, reason: e.reason, kind: "check" };
    }
    throw new UsageError(`${where}: give either rule or check`);
  });
  return { file, entries };
}

const failing = (v: string) => v === "fail" || v === "error";

/** Which failures the baseline accepts, which entries now pass (stale), and what still fails the run. */
export function applyBaseline(
  report: Report,
  baseline: Baseline,
  prefix: string,
): { known: BaselineEntry[]; stale: BaselineEntry[]; unexpected: string[] } {
  const known: BaselineEntry[] = [];
  const stale: BaselineEntry[] = [];
  const covered = (ruleId: string, checkId: string) =>
    baseline.entries.some((e) => (e.kind === "rule" ? `${prefix}.${e.id}` === ruleId : e.id === checkId));
  for (const entry of baseline.entries) {
    const verdicts =
      entry.kind === "rule"
        ? report.rules.filter((r) => r.id === `${prefix}.${entry.id}`).map((r) => r.verdict)
        : report.rules.flatMap((r) => r.checks.filter((c) => c.id === entry.id).map((c) => c.verdict));
    if (verdicts.some(failing)) known.push(entry);
    else if (verdicts.some((v) => v === "pass" || v === "warn")) stale.push(entry);
  }
  const unexpected = report.rules
    .filter((r) => failing(r.verdict))
    .filter((r) => !r.checks.filter((c) => failing(c.verdict)).every((c) => covered(r.id, c.id)) && !covered(r.id, ""))
    .map((r) => r.id);
  return { known, stale, unexpected };
}

/** The report's record of the baseline: what it accepted and what is stale. */
export function baselineSection(report: Report, baseline: Baseline, prefix: string): NonNullable<Report["baseline"]> {
  const { known, stale } = applyBaseline(report, baseline, prefix);
  const strip = ({ id, reason }: BaselineEntry) => ({ id, reason });
  return { file: baseline.file, known: known.map(strip), stale: stale.map(strip) };
}
