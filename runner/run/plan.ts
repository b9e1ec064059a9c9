// The plan of a run, decided before any check runs: which checks (selection and shard), in
// which order, and which stretches of them share the bridge several at a time.
import { readFileSync } from "node:fs";
import { type Check, shardUnit } from "../../suites/harness/check.js";
import type { RunConfig } from "./config.js";

export const SHARD_REASON = "checked in another shard";
/** Checks at a time against a bridge this tool owns and that serves several connections. */
const DEFAULT_CONCURRENCY = 4;

export interface Plan {
  /** The checks of rules the contract holds. */
  readonly runnable: readonly Check[];
  /** The checks this run judges, in the order they start. */
  readonly chosen: readonly Check[];
  /** The check that fills the history beside the checks without needs (see historyFillsOnce). */
  readonly historyFiller?: Check;
  /** `chosen` cut into stretches: one check runs alone, several share the bridge (a pool). */
  readonly stretches: readonly (readonly Check[])[];
  /** Checks at a time in a pool. */
  readonly concurrency: number;
  /** In a lane: the checks any lane judges as it becomes free (floats), costliest first; not part of `chosen`. */
  readonly floating: readonly Check[];
}

/**
 * Whether a check may be judged by whichever lane is free: it runs alone on the bridge and shares no state with any
 * other check, so the bridge it runs on does not change its verdict. These are the checks that wait on the game loop.
 */
export const floats = (check: Check): boolean => Boolean(check.needs?.length) && !check.state && !check.inherits;

/**
 * What a run judges and how, given whether the bridge serves a second connection (the probe). In a lane (`inLane`), the
 * shard holds the checks that do not float, and the ones that do are left to whichever lane is free (lanes.ts).
 */
export function plan(config: RunConfig, servesConcurrently: boolean | undefined, inLane = false): Plan {
  const { contract, target } = config;
  const runnable = config.checks.filter((c) => c.rules.some((r) => contract.has(r)));
  const selected = runnable.filter(
    (c) => c.rules.some(config.selected) && (!config.onlyChecks || config.onlyChecks.has(c.id)),
  );
  const wanted = inLane ? selected.filter((c) => !floats(c)) : selected;
  const cost = config.shard || inLane ? checkCosts(selected) : () => 1;
  // Costliest first, so the lanes end together; in watch mode, the ones of rules that failed last time before them.
  const early = (c: Check) => Number(c.rules.some((r) => config.first?.has(r)));
  const floating = inLane ? selected.filter(floats).sort((a, b) => early(b) - early(a) || cost(b) - cost(a)) : [];
  // Every shard deals the same selection the same way.
  const dealt = wanted.filter(shardFilter(wanted, config.shard, cost));
  const pooled = Boolean(servesConcurrently) && config.concurrency !== 1;
  const chosen = target?.restart ? historyFillsOnce(dealt, pooled) : dealt;
  // Rules that failed last time go first (watch mode), in their usual order.
  const first = config.first;
  if (first?.size) {
    const early = (c: Check) => c.rules.some((r) => first.has(r));
    chosen.sort((a, b) => Number(early(b)) - Number(early(a)));
  }
  const historyFiller = target?.restart ? chosen.find((c) => c.state) : undefined;
  // Several at a time only where the bridge serves a second connection; by default only where
  // this tool owns the bridge, so a failure found beside others can be judged again on a fresh one.
  const concurrency = servesConcurrently ? (config.concurrency ?? (target?.restart ? DEFAULT_CONCURRENCY : 1)) : 1;
  const stretched = stretches(chosen, historyFiller, concurrency);
  return { runnable, chosen, historyFiller, stretches: stretched, concurrency, floating };
}

/**
 * A stretch of checks that need no shared bridge state (queue, history) may share the bridge, and
 * where the bridge can be started afresh, with the check that fills the history; any other check
 * runs alone.
 */
function stretches(chosen: readonly Check[], filler: Check | undefined, concurrency: number): Check[][] {
  const out: Check[][] = [];
  for (let i = 0; i < chosen.length; ) {
    let end = i + 1;
    const startsPool = !chosen[i]!.needs?.length || chosen[i] === filler;
    if (concurrency > 1 && startsPool) while (end < chosen.length && !chosen[end]!.needs?.length) end++;
    out.push(chosen.slice(i, end));
    i = end;
  }
  return out;
}

/**
 * Where this tool can start the bridge afresh, the order that fills a long history once: the
 * checks that act first, then the first history check beside the checks without needs, then the
 * other history checks, and those that take the history over last (docs/ARCHITECTURE.md).
 */
export function historyFillsOnce(checks: readonly Check[], pooled = true): Check[] {
  const makers = checks.filter((c) => c.state);
  if (!makers.length) return [...checks];
  const rest = checks.filter((c) => !c.state && !c.inherits);
  if (!pooled) return historyLast(checks, makers, rest);
  return [
    ...rest.filter((c) => c.needs?.length),
    makers[0]!,
    ...rest.filter((c) => !c.needs?.length),
    ...makers.slice(1),
    ...checks.filter((c) => c.inherits && !c.state),
  ];
}

/**
 * historyFillsOnce for a bridge that serves one connection at a time, where nothing runs beside the fill: the checks
 * without `needs` first (a failure among them is rechecked on fresh bridges, which would empty a history made
 * before), then those that act, whose events count toward the history, then the history checks one after another,
 * each taking over the history the one before left, and the checks that take it over last.
 */
function historyLast(checks: readonly Check[], makers: Check[], rest: Check[]): Check[] {
  return [
    ...rest.filter((c) => !c.needs?.length),
    ...rest.filter((c) => c.needs?.length),
    ...makers,
    ...checks.filter((c) => c.inherits && !c.state),
  ];
}

/**
 * Shard I of N, dealt by measured cost (runner/check-costs.json, written by `npm run bench`):
 * the costliest first, each to the shard with the least so far. Checks that share a costly
 * bridge state (Check.state) are dealt as one. The deal depends only on the checks and the
 * table, so shards are disjoint, complete and alike in every job.
 */
function shardFilter(
  checks: readonly Check[],
  shard: RunConfig["shard"],
  cost: (check: Check) => number,
): (check: Check) => boolean {
  if (!shard) return () => true;
  const units = new Map<string, { ids: string[]; cost: number }>();
  for (const check of checks) {
    const key = shardUnit(check);
    const unit = units.get(key) ?? units.set(key, { ids: [], cost: 0 }).get(key)!;
    unit.ids.push(check.id);
    unit.cost += cost(check);
  }
  const load = new Array<number>(shard.count).fill(0);
  const mine = new Set<string>();
  const dealt = [...units.values()].sort((a, b) => b.cost - a.cost || a.ids[0]!.localeCompare(b.ids[0]!));
  for (const unit of dealt) {
    const lightest = load.indexOf(Math.min(...load));
    load[lightest]! += unit.cost;
    if (lightest === shard.index - 1) for (const id of unit.ids) mine.add(id);
  }
  return (check) => mine.has(check.id);
}

/**
 * What each check adds to its shard's time, in ms: its measured cost, divided for a pooled check
 * (one without `needs`) by the table's `pooledSpeedup`. A check the table does not know costs
 * what the median one does; without a table every check costs the same.
 */
function checkCosts(checks: readonly Check[]): (check: Check) => number {
  let table: { costs?: Record<string, number>; pooledSpeedup?: number } = {};
  try {
    table = JSON.parse(readFileSync(new URL("../check-costs.json", import.meta.url), "utf8")) as typeof table;
  } catch {
    /* no table */
  }
  const costs = table.costs ?? {};
  const speedup = typeof table.pooledSpeedup === "number" && table.pooledSpeedup >= 1 ? table.pooledSpeedup : 1;
  const known = checks.map((c) => costs[c.id]).filter((v): v is number => typeof v === "number" && v >= 0);
  const median = known.length ? [...known].sort((a, b) => a - b)[Math.floor(known.length / 2)]! : 1;
  return (check) => (costs[check.id] ?? median) / (check.needs?.length ? 1 : speedup);
}
