// --merge: the JSON reports of one run's shards joined into one report.
import type { Contract } from "../../../protocol/contract.js";
import type { Report, Reporter } from "../../../reports/types.js";
import { type Baseline, baselineSection } from "../../baseline.js";
import { afterMerge, campaignLines, mergeReports, mixedReports, shardProblem } from "../../merge.js";
import { checkWritable } from "../../outputs.js";
import { readReportFile } from "../inputs.js";
import { UsageError } from "../options/value.js";
import { EXIT, type Io, type Outcome, type Values, verdictCode, writeReports } from "../outcome.js";

export interface MergeInputs {
  files: string[];
  contract: Contract;
  baseline?: Baseline;
  outputs: { format: string; file: string }[];
  reporters: () => Reporter[];
  /** Where the human output goes (stderr when a report has stdout to itself). */
  human: (text: string) => void;
  /** Prints what changed since --compare OLD. */
  afterward: (report: Report) => void;
}

export async function mergeCommand(values: Values, m: MergeInputs, io: Io): Promise<Outcome> {
  if (m.files.length === 0) throw new UsageError("--merge takes the JSON reports to merge: --merge a.json b.json ...");
  checkWritable(m.outputs);
  const inputs = m.files.map((f) => readReportFile(f, "--merge"));
  const mixed = shardProblem(inputs, m.files) ?? (values.force ? undefined : mixedReports(inputs, m.files));
  if (mixed) throw new UsageError(`--merge: ${mixed}`);
  const merged = mergeReports(inputs, m.files);
  afterMerge(values, merged, (line) => io.err(`aicontrol-conformance: ${line}\n`));
  if (m.baseline) merged.baseline = baselineSection(merged, m.baseline, m.contract.prefix);
  const lost = await writeReports(m.reporters(), merged, io);
  if (merged.parts) m.human(campaignLines(merged));
  m.afterward(merged);
  return {
    code: lost ? EXIT.usage : verdictCode(merged, m.baseline, m.contract, m.human, values.allowUncovered),
    report: merged,
  };
}
