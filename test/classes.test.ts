import { describe, expect, it } from "vitest";
import { classesFirst, cover, MAX_PAIRS } from "../suites/harness/classes.js";

describe("cover", () => {
  const key = ([a, b]: [unknown, unknown]) => `${String(a)}|${String(b)}`;

  it("is the whole product where it fits, each pair once", () => {
    const pairs = cover(["echo", "move", "fail"], ["1", "", 1.5, null]);
    expect(pairs).toHaveLength(12);
    expect(new Set(pairs.map(key)).size).toBe(12);
  });

  it("holds every class of both sides within its first max(|a|, |b|) pairs", () => {
    for (const [a, b] of [
      [3, 9],
      [9, 3],
      [5, 5],
      [1, 7],
      [7, 1],
    ] as const) {
      const left = Array.from({ length: a }, (_, i) => `a${i}`);
      const right = Array.from({ length: b }, (_, i) => `b${i}`);
      const first = cover(left, right).slice(0, Math.max(a, b));
      expect(new Set(first.map(([x]) => x))).toEqual(new Set(left));
      expect(new Set(first.map(([, y]) => y))).toEqual(new Set(right));
    }
  });

  it("puts the second type with the second value early: a fault of one type and one value is met at once", () => {
    const pairs = cover(["echo", "move", "fail"], ["1", "", 1.5]);
    expect(pairs.slice(0, 3)).toContainEqual(["move", ""]);
  });

  it("beyond the cap keeps whole rounds, at least one, so every class is still paired", () => {
    const many = Array.from({ length: 60 }, (_, i) => `t${i}`);
    const pairs = cover(many, [1, 2, 3]);
    expect(pairs).toHaveLength(60);
    expect(pairs.length).toBeGreaterThan(MAX_PAIRS);
    expect(new Set(pairs.map(([t]) => t)).size).toBe(60);
    expect(cover(["a", "b", "c"], [1, 2, 3, 4], 8)).toHaveLength(8);
    expect(cover(["a", "b", "c"], [1, 2, 3, 4], 7)).toHaveLength(4);
    expect(cover([], [1])).toEqual([]);
  });
});

describe("classesFirst", () => {
  it("runs every class, then the random cases asked for (none below zero)", () => {
    expect(classesFirst([1, 2, 3], 5)).toEqual({ examples: [1, 2, 3], runs: 8 });
    expect(classesFirst([1, 2, 3], -4)).toEqual({ examples: [1, 2, 3], runs: 3 });
  });
});
