// --compare: which rules changed verdict between two reports (OLD NEW), or since OLD after a run or merge.
import type { Report } from "../../../reports/types.js";
import { compareReports, describeComparison } from "../../compare.js";
import { readReportFile } from "../inputs.js";
import { EXIT, type Io, type Outcome } from "../outcome.js";

/** --compare OLD NEW: exits 1 when a rule got worse. */
export function compareCommand(oldFile: string, newFile: string, io: Io): Outcome {
  const [before, after] = [oldFile, newFile].map((f) => readReportFile(f, "--compare"));
  io.out(describeComparison(before!, after!, oldFile, newFile));
  return { code: compareReports(before!, after!).some((c) => c.worse) ? EXIT.fail : EXIT.pass };
}

/** --compare OLD beside a run or a merge: the changes from OLD's verdicts to `report`'s, printed after it. */
export function compareAfter(oldFile: string | undefined, write: (text: string) => void) {
  const previous = oldFile ? readReportFile(oldFile, "--compare") : undefined;
  return (report: Report) => {
    if (previous) write(describeComparison(previous, report, oldFile!));
  };
}
