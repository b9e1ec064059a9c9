import { readFileSync } from "node:fs";
import { reportProblem } from "../reports/schema.js";
import type { Report } from "../reports/types.js";
import { fileProblem } from "./files.js";
import { UsageError } from "./options.js";

/** Reads a JSON report written by this tool. */
export function readReportFile(file: string, flag: string): Report {
  let report: Report;
  try {
    report = JSON.parse(readFileSync(file, "utf8")) as Report;
  } catch (err) {
    throw new UsageError(`cannot read ${flag} ${file}: ${fileProblem(err)}`);
  }
  const problem = reportProblem(report);
  if (problem)
    throw new UsageError(`${flag} ${file} is not an aicontrol-conformance JSON report (schemaVersion 1): ${problem}`);
  return report;
}
