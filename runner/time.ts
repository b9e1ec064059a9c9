// Where a run's time went, in parts that do not overlap and add up to its wall time.
import type { Report } from "../reports/types.js";
import type { WireStats } from "../suites/harness/connection.js";

type Time = NonNullable<Report["time"]>;
type Parts = NonNullable<Time["parts"]>;

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

/** One lane's time: its wall time from the run's start to its last check, its restarts, and what it counted. */
export interface LaneTime {
  ms: number;
  restartsMs: number;
  stats: WireStats;
}

/**
 * The time parts of a run, lane by lane and added up. With one lane they add up to the run's wall time; with several
 * (bridges side by side) to the lanes' time together, which `lanes` gives with their count.
 */
export function laneTimeParts(totalMs: number, lanes: readonly LaneTime[]): Pick<Time, "parts" | "lanes"> {
  if (lanes.length === 1) return { parts: timeParts(totalMs, lanes[0]!.restartsMs, lanes[0]!.stats) };
  const each = lanes.map((lane) => timeParts(lane.ms, lane.restartsMs, lane.stats));
  const sum = (key: "restartingMs" | "recheckingMs" | "shrinkingMs" | "checksMs") =>
    each.reduce((total, parts) => total + parts[key], 0);
  return {
    parts: {
      restartingMs: sum("restartingMs"),
      recheckingMs: sum("recheckingMs"),
      shrinkingMs: sum("shrinkingMs"),
      checksMs: sum("checksMs"),
      ...(each.some((parts) => parts.overlap) ? { overlap: true as const } : {}),
    },
    lanes: { count: lanes.length, totalMs: lanes.reduce((total, lane) => total + lane.ms, 0) },
  };
}
