// Equivalence classes before random cases. A property first tries one case of every class of its input (every
// ill-typed value with every command type, both sides of a limit, every envelope defect, every id type), the
// cheapest that break the most bridges first, so a fault that one class triggers is found at any run count; the
// generated cases follow. fast-check counts its examples in numRuns, so the run count is raised to hold them all.

import type { PropertyOptions } from "./check.js";

/** Most pairs `cover` keeps of a product: beyond it, each class of each side still appears at least once. */
export const MAX_PAIRS = 48;

/**
 * The pairs of two class lists, in rounds: each round of max(|a|, |b|) pairs holds every class of both sides, and
 * the rounds together are the whole product. Where the product exceeds `max`, whole rounds are kept up to it
 * (at least the first), so every class of each side is still paired at least once.
 */
export function cover<A, B>(a: readonly A[], b: readonly B[], max = MAX_PAIRS): [A, B][] {
  if (a.length === 0 || b.length === 0) return [];
  const flip = a.length > b.length;
  const [short, long] = flip ? [b, a] : [a, b];
  const width = long.length;
  const rounds = Math.max(1, Math.min(short.length, Math.floor(max / width)));
  const out: [A, B][] = [];
  for (let r = 0; r < rounds; r++)
    for (let t = 0; t < width; t++) {
      const s = short[(t + r) % short.length]!;
      const l = long[t]!;
      out.push(flip ? ([l, s] as unknown as [A, B]) : ([s, l] as unknown as [A, B]));
    }
  return out;
}

/** Options that run every class case, in order, then `random` generated cases. */
export function classesFirst<T>(classes: readonly T[], random: number): PropertyOptions<T> {
  return { examples: [...classes], runs: classes.length + Math.max(0, random) };
}
