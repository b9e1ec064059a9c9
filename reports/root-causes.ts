import type { Report } from "./types.js";

/**
 * One line on the run's root causes and the rules each failed: "root causes: 2; a.b failed 1 rule (3 checks
 * pointed at it); c.d failed 2 rules: c.d, e.f" (undefined: nothing failed).
 */
export function rootCauseLine(report: Report): string | undefined {
  const causes = report.rootCauses;
  if (!causes?.length) return undefined;
  const short = (id: string) => id.slice(id.indexOf(".") + 1);
  const each = causes.map(({ rule, failed, pointedBy }) => {
    const rules = failed.length === 1 ? "1 rule" : `${failed.length} rules: ${failed.map(short).join(", ")}`;
    const pointed = pointedBy?.length
      ? ` (${pointedBy.length} check${pointedBy.length === 1 ? "" : "s"} of other rules pointed at it)`
      : "";
    return `${short(rule)} failed ${rules}${pointed}`;
  });
  return `root causes: ${causes.length}; ${each.join("; ")}`;
}
