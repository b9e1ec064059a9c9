import { writeOutput } from "./output.js";
import type { Reporter } from "./types.js";

/** The machine-readable report (schemaVersion 1). */
export function jsonReporter(file: string, stdout?: (text: string) => void): Reporter {
  return { name: "json", onRunEnd: (report) => writeOutput(file, `${JSON.stringify(report, null, 2)}\n`, stdout) };
}
