// The files a command reads: an earlier JSON report, another revision of the contract.
import { readFileSync } from "node:fs";
import { type Contract, ContractError, loadContract } from "../../protocol/contract.js";
import { reportProblem } from "../../reports/schema.js";
import type { Report } from "../../reports/types.js";
import { fileProblem } from "../files.js";
import { UsageError } from "./options/value.js";

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

export function readContract(file: string): Contract {
  try {
    return loadContract(file);
  } catch (err) {
    if (err instanceof ContractError) throw new UsageError(`--contract ${err.message}`);
    throw err;
  }
}
