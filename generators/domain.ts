import fc from "fast-check";

/**
 * A finite domain a generator draws from: a list of constants (each drawn alike), or a range drawn from, whose
 * `ends` stand for it. Every value of the list, and a range's ends, are the domain's classes: a check tries them
 * all before its generated cases, in every profile (suites/harness/classes.ts).
 */
export type Domain<T> = { values: readonly T[] } | { range: fc.Arbitrary<T>; ends: readonly T[] };

/** The arbitrary that draws from a domain. */
export const drawFrom = <T>(d: Domain<T>): fc.Arbitrary<T> => ("values" in d ? fc.constantFrom(...d.values) : d.range);

/** A domain's classes: every constant of a list, a range's ends. */
export const classesOf = <T>(d: Domain<T>): readonly T[] => ("values" in d ? d.values : d.ends);

/**
 * Several lists as one, one of each first: the first of every list, then the second of each, and so on. A check
 * that tries them in this order meets every kind early, and every value of every kind before its generated cases.
 */
export function interleave<T>(lists: readonly (readonly T[])[]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) for (const list of lists) if (i < list.length) out.push(list[i]!);
  return out;
}
