// --export DIR: after a run, a standalone Python reproducer per failing check.
import type { Contract } from "../../../protocol/contract.js";
import type { Report } from "../../../reports/types.js";
import { exportReproducers } from "../../export.js";
import type { Io } from "../outcome.js";

/** Writes the reproducers of `report`'s failures into `dir`, saying on stderr what it wrote and what it could not. */
export function exportCommand(
  dir: string,
  report: Report,
  options: { contract: Contract; tokenEnv: string; tokenConfigured: boolean; timeoutMs: number },
  io: Io,
): void {
  const { written, refused } = exportReproducers(dir, report, options);
  for (const { check, reason } of refused)
    io.err(`aicontrol-conformance: --export: no reproducer of ${check}: ${reason}\n`);
  if (written.length) io.err(`aicontrol-conformance: exported ${written.length} reproducer(s) to ${dir}\n`);
}
