import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Reporter } from "../runner/run.js";

/** The machine-readable report (schemaVersion 1, DESIGN.md). */
export function jsonReporter(file: string): Reporter {
  return {
    name: "json",
    onRunEnd(report) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
    },
  };
}
