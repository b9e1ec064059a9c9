// What every command shares: the streams it writes to, what it returns, and its exit code.
import type { Contract, RuleId } from "../../protocol/contract.js";
import type { Report, Reporter } from "../../reports/types.js";
import { applyBaseline, type Baseline } from "../baseline.js";
import type { BridgeFactory } from "../targets.js";
import type { OptionValues } from "./options/table.js";

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** A live progress line (a terminal). */
  live?: boolean;
  /** Print the console report (the API may run silently). */
  console?: boolean;
}

export interface Deps {
  /** The built-in target's bridge; without it, a target must be given. */
  builtIn?: BridgeFactory;
  signal?: AbortSignal;
  /** Rules whose checks run first (watch mode: the ones that failed last time). */
  first?: ReadonlySet<RuleId>;
}

export type Values = Partial<OptionValues>;

/** The exit code and, where a run or a merge happened, its report. */
export interface Outcome {
  code: number;
  report?: Report;
}

export const EXIT = { pass: 0, fail: 1, usage: 2, unreachable: 3, interrupted: 130 } as const;

/** The end of a run without one (--merge): the reporters' last hook, and whether one failed. */
export async function writeReports(reporters: Reporter[], report: Report, io: Io): Promise<boolean> {
  let lost = false;
  for (const reporter of reporters) {
    try {
      await reporter.onRunEnd?.(report);
    } catch (err) {
      lost = true;
      io.err(`aicontrol-conformance: the ${reporter.name} report could not be written: ${(err as Error).message}\n`);
    }
  }
  return lost;
}

/** 1 when a rule failed or could not be judged (beyond what the baseline accepts), or a baseline entry is stale. */
export function verdictCode(
  report: Report,
  baseline: Baseline | undefined,
  contract: Contract,
  out: (t: string) => void,
  allowUncovered?: boolean,
): number {
  const counts = (r: Report["rules"][number]) =>
    r.verdict === "fail" || (r.verdict === "error" && !(allowUncovered && r.reasonKind === "uncovered"));
  if (!baseline) return report.rules.some(counts) ? EXIT.fail : EXIT.pass;
  const { known, stale, expired, consistent, unexpected } = applyBaseline(report, baseline, contract.prefix);
  out(
    `baseline ${baseline.file}: ${known.length} known failure${known.length === 1 ? "" : "s"} accepted, ${unexpected.length} new, ${stale.length} stale\n`,
  );
  for (const e of stale) out(`  STALE ${e.id}: it passes now, so remove it from the baseline (it said: ${e.reason})\n`);
  for (const e of expired) out(`  EXPIRED ${e.id}: its entry ran until ${e.until}, so its failure counts again\n`);
  for (const e of consistent)
    out(
      `  NO LONGER FLAKY ${e.id}: it failed every time it was re-sent, so it is a failure now (it said: ${e.reason})\n`,
    );
  for (const id of unexpected) out(`  NEW   ${id}\n`);
  return unexpected.length + stale.length > 0 ? EXIT.fail : EXIT.pass;
}
