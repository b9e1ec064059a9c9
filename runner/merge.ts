import { worst } from "../protocol/verdict.js";
import type { Report, RuleReport } from "../reports/types.js";
import { ruleVerdict, summarize } from "./aggregate.js";
import { baselineFromRun } from "./baseline.js";
import { saveFailures } from "./corpus.js";
import { mergeStateCoverage } from "./coverage.js";

/**
 * Why these reports cannot be one: a different target, contract or tool version (file
 * names index `files`), or undefined. Shards of one run always agree on all three.
 */
export function mixedReports(reports: Report[], files: string[]): string | undefined {
  const first = reportKey(reports[0]!);
  for (const [i, report] of reports.entries()) {
    const k = reportKey(report);
    for (const what of Object.keys(first) as (keyof typeof first)[]) {
      if (k[what] !== first[what]) {
        return `${files[i]} has another ${what} (${k[what]}) than ${files[0]} (${first[what]}); pass --force to merge anyway`;
      }
    }
  }
  return undefined;
}

/** What a report is of: its target, contract and tool. */
export const reportKey = (r: Report) => ({
  // A bridge this tool started listens on a new port each run: its command (or the built-in
  // bridge) is what names it. A running bridge is named by its endpoint, a client by its command.
  target: `${r.target.kind ?? "bridge"} ${identity(r.target)}`,
  contract: r.contract?.sha256 ?? "unknown",
  "tool version": `${r.tool.name} ${r.tool.version}`,
});

const identity = (t: Report["target"]): string =>
  t.kind === "bridge" && t.spawned ? (t.command ?? "built-in") : (t.endpoint ?? t.command ?? "");

/**
 * Why these reports are not the shards of one run, or undefined: --merge takes exactly one
 * report per shard of one N (a whole run is the one shard of 1), all with one seed. Unlike a
 * different target or contract, no --force makes up for a shard missing or given twice.
 */
export function shardProblem(reports: Report[], files: string[]): string | undefined {
  const parts = reports.map(shardOf);
  // The parts of a fuzzing campaign may be whole runs, each with its own seed (--duration --seed per job).
  if (reports.length > 1 && reports.every((r, i) => r.fuzz && parts[i]!.count === 1)) {
    const twice = reports.findIndex((r, i) => reports.findIndex((o) => o.seed === r.seed) !== i);
    return twice < 0
      ? undefined
      : `${files[twice]} ran with seed ${reports[twice]!.seed} as another part did: the parts of a campaign run with distinct seeds (or --shard I/N)`;
  }
  const name = (i: number) => `${files[i]} (${describe(parts[i]!)})`;
  const other = parts.findIndex((p) => p.count !== parts[0]!.count);
  if (other >= 0) return `${name(other)} and ${name(0)} are not shards of one split`;
  const seed = reports.findIndex((r) => r.seed !== reports[0]!.seed);
  if (seed >= 0)
    return `${files[seed]} ran with seed ${reports[seed]!.seed}, ${files[0]} with seed ${reports[0]!.seed}: shards of one run share its seed`;
  const count = parts[0]!.count;
  for (let index = 1; index <= count; index++) {
    const given = parts.flatMap((p, i) => (p.index === index ? [i] : []));
    if (given.length > 1) return `${given.map(name).join(" and ")} are the same shard: give each shard once`;
    if (given.length === 0)
      return `shard ${index}/${count} is missing: --merge takes the report of every shard (${count} in all)`;
  }
  return undefined;
}

/** A report's shard: recorded, or (in a report from before shards were recorded) read from its skip reasons. */
function shardOf(report: Report): { index: number; count: number } {
  if (report.shard) return report.shard;
  const m = report.rules.map((r) => /--shard (\d+)\/(\d+)/.exec(r.reason ?? "")).find(Boolean);
  return m ? { index: Number(m[1]), count: Number(m[2]) } : { index: 1, count: 1 };
}

const describe = (p: { index: number; count: number }) =>
  p.count === 1 ? "a whole run" : `shard ${p.index}/${p.count}`;

/**
 * One report from the reports of several shards (or runs): every check of every rule, verdicts
 * recomputed. A check several parts ran (the whole-run parts of a campaign) keeps its worst
 * finding, the first part's among equals: each failure once. `files` names the parts of a campaign.
 */
export function mergeReports(reports: Report[], files: string[] = []): Report {
  if (reports.length === 0) throw new Error("nothing to merge");
  const [{ shard: _, ...first }] = reports as [Report, ...Report[]];
  const rules: RuleReport[] = first.rules.map((rule) => {
    const all = reports
      .map((r) => r.rules.find((x) => x.id === rule.id))
      .filter((x): x is RuleReport => x !== undefined);
    const byCheck = new Map<string, RuleReport["checks"][number]>();
    for (const c of all.flatMap((r) => r.checks)) {
      const known = byCheck.get(c.id);
      if (!known || (worst(known.verdict, c.verdict) === c.verdict && c.verdict !== known.verdict))
        byCheck.set(c.id, c);
    }
    const checks = [...byCheck.values()];
    if (checks.length) {
      const { reason: _, notes: __, ...rest } = rule;
      const { verdict, unjudged } = ruleVerdict(checks);
      const notes = [...new Set([...all.flatMap((r) => r.notes ?? []), ...unjudged])];
      return { ...rest, verdict, ...(notes.length ? { notes } : {}), checks };
    }
    // Where a shard ran the rule's checks, its reason (not "checked in another shard") is the merged run's.
    const { reason, reasonKind } = all.find((r) => r.reason && r.reasonKind !== "other-shard") ?? rule;
    return {
      ...rule,
      verdict: "skip",
      checks: [],
      ...(reason ? { reason } : {}),
      ...(reasonKind ? { reasonKind } : {}),
    };
  });
  const started = Math.min(...reports.map((r) => Date.parse(r.startedAt)));
  const ended = Math.max(...reports.map((r) => Date.parse(r.startedAt) + r.durationMs));
  const wires = reports.map((r) => r.wire).filter((w) => w !== undefined);
  const wire = wires.length
    ? {
        lines: wires.reduce((t, w) => t + w.lines, 0),
        bytesSent: wires.reduce((t, w) => t + w.bytesSent, 0),
        bytesReceived: wires.reduce((t, w) => t + w.bytesReceived, 0),
        waitingMs: wires.reduce((t, w) => t + w.waitingMs, 0),
      }
    : undefined;
  const { stateCoverage: _coverage, fuzz: _fuzz, ...head } = first;
  const coverage = mergeStateCoverage(reports.map((r) => r.stateCoverage));
  return {
    ...head,
    ...(wire ? { wire } : {}),
    ...(coverage ? { stateCoverage: coverage } : {}),
    ...campaign(reports, files),
    startedAt: new Date(started).toISOString(),
    durationMs: ended - started,
    summary: summarize(rules),
    rules,
  };
}

/** The fuzzing of the parts of a campaign: summed, and part by part. */
function campaign(reports: Report[], files: string[]): Pick<Report, "fuzz" | "parts"> {
  const fuzzed = reports.filter((r) => r.fuzz);
  if (!fuzzed.length) return {};
  const sum = (key: "durationMs" | "rounds" | "checks") => fuzzed.reduce((t, r) => t + r.fuzz![key], 0);
  const parts = reports.map((r, i) => ({
    file: files[i] ?? `part ${i + 1}`,
    seed: r.seed,
    ...(r.shard ? { shard: r.shard } : {}),
    rounds: r.fuzz?.rounds ?? 0,
    checks: r.fuzz?.checks ?? 0,
    ...(r.stateCoverage ? { cellsReached: r.stateCoverage.reached } : {}),
    failingChecks: new Set(r.rules.flatMap((x) => x.checks.filter((c) => c.verdict === "fail").map((c) => c.id))).size,
  }));
  return { fuzz: { durationMs: sum("durationMs"), rounds: sum("rounds"), checks: sum("checks") }, parts };
}

/** A merged campaign for the console: the whole, then each part's rounds, check runs, cells and failures. */
export function campaignLines(report: Report): string {
  const parts = report.parts ?? [];
  const cells = report.stateCoverage
    ? `; state cells reached: ${report.stateCoverage.reached}/${report.stateCoverage.total}`
    : "";
  const lines = parts.map((p) => {
    const name = p.shard ? `shard ${p.shard.index}/${p.shard.count}` : `seed ${p.seed}`;
    const reached = p.cellsReached !== undefined ? `, ${p.cellsReached} cells` : "";
    return `  ${p.file} (${name}): ${p.rounds} rounds, ${p.checks} check runs${reached}, ${p.failingChecks} failing checks`;
  });
  const fuzz = report.fuzz!;
  return `campaign of ${parts.length} parts: ${fuzz.rounds} fuzzing rounds, ${fuzz.checks} check runs${cells}\n${lines.join("\n")}\n`;
}

/** After a merge: --write-baseline of its failures, and with --save-failures the campaign's corpus, every part's failing cases. */
export function afterMerge(
  values: { writeBaseline?: string; baselineUntil?: string; saveFailures?: string },
  merged: Report,
  say: (line: string) => void,
): void {
  baselineFromRun(values, merged, say);
  if (values.saveFailures)
    say(`saved ${saveFailures(values.saveFailures, merged)} failing case(s) to ${values.saveFailures}`);
}
