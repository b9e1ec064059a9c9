import type { Report } from "./types.js";

/** One line on the state cells a run reached: "state coverage: 41/46 cells; not reached: ..." (undefined: none reported). */
export function stateCoverageLine(report: Report): string | undefined {
  const c = report.stateCoverage;
  if (!c) return undefined;
  const missed = c.cells.filter((cell) => !cell.reached && !cell.unreachable).map((cell) => cell.id);
  const out = c.cells.filter((cell) => cell.unreachable).length;
  const parts = [`state coverage: ${c.reached}/${c.total} cells`];
  if (missed.length) parts.push(`not reached: ${missed.join(", ")}`);
  if (out) parts.push(`${out} out of reach for this bridge (see the report)`);
  if (c.addedByDuration) parts.push(`--duration added ${c.addedByDuration.length}`);
  return parts.join("; ");
}
