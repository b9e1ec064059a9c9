// Where a run's time went, in parts that do not overlap and add up to its wall time.
import type { Report } from "../reports/types.js";
import type { WireStats } from "../suites/harness/connection.js";

type Parts = NonNullable<NonNullable<Report["time"]>["parts"]>;

/**
 * Restarting the bridge (wherever it happened), rechecking and shrinking without the restarts within them, and the
 * rest: running the checks, preflight and the canary. Checks that ran beside one another (a pool) may shrink at the
 * same time: where the named parts then add up to more than the wall time, `overlap` says so and the rest is 0.
 */
export function timeParts(totalMs: number, restartsMs: number, stats: WireStats): Parts {
  const rechecking = Math.max(0, stats.recheckingMs - stats.recheckRestartsMs);
  const shrinking = Math.max(0, stats.shrinkingMs - stats.shrinkRestartsMs);
  const named = restartsMs + rechecking + shrinking;
  return {
    restartingMs: restartsMs,
    recheckingMs: rechecking,
    shrinkingMs: shrinking,
    checksMs: Math.max(0, totalMs - named),
    ...(named > totalMs ? { overlap: true as const } : {}),
  };
}
