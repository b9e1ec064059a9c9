// The programmatic API, for bridge authors who test in TypeScript: the same run as the CLI.
import { ReferenceBridge } from "./bridges/reference/bridge.js";
import type { Report } from "./reports/types.js";
import { type ConformanceOptions, runConformance as run } from "./runner/api.js";

export { type BridgeOptions, ReferenceBridge } from "./bridges/reference/bridge.js";
export type { CheckReport, Report, RuleReport, Verdict } from "./reports/types.js";
export { ConformanceError, type ConformanceOptions } from "./runner/api.js";

/** Runs the suite (against the built-in reference bridge unless `endpoint` or `spawn` is given). */
export function runConformance(options: ConformanceOptions = {}): Promise<Report> {
  return run(options, { builtIn: (o) => new ReferenceBridge(o) });
}
