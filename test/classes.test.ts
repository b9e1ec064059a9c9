import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { deepNesting, deepNestingClasses } from "../generators/deepNesting.js";
import { malformedUtf8Classes, UTF8_FAULTS } from "../generators/malformedUtf8.js";
import { nonStandardJson, nonStandardJsonClasses } from "../generators/nonStandardJson.js";
import { preciseNumberClasses } from "../generators/preciseNumber.js";
import { unknownMethod, unknownMethodNearMisses } from "../generators/unknownMethod.js";
import { validJsonEdgeClasses } from "../generators/validJsonEdge.js";
import { classesFirst, cover, MAX_PAIRS } from "../suites/harness/classes.js";
import { allChecks } from "../suites/index.js";
import { runSuite, verdictOf } from "./helpers.js";

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

describe("every value of a finite domain, in every profile", () => {
  it("nonStandardJson: every line a kind draws from a list is among its classes, a range's by its ends", () => {
    const classes = nonStandardJsonClasses();
    const listed = new Set(classes.map((c) => c.text));
    const ranges = new Set(["control-char", "truncated"]);
    for (const { kind, text } of fc.sample(nonStandardJson(), { numRuns: 3000, seed: 1 }))
      if (!ranges.has(kind)) expect(listed, `${kind}: ${text}`).toContain(text);
    // One of each kind comes first.
    expect(new Set(classes.slice(0, 12).map((c) => c.kind)).size).toBe(12);
    expect(classes.filter((c) => c.kind === "nan-infinity").map((c) => c.text)).toHaveLength(4);
  });

  it("the other generators' classes hold every constant they draw from", () => {
    // Malformed UTF-8: every fault raw and in every string of a request.
    const utf8 = malformedUtf8Classes();
    for (const fault of UTF8_FAULTS)
      expect(
        utf8.filter((l) => l.fault === fault),
        fault,
      ).toHaveLength(4);
    const slots = ['"method":"ping', '"id":"', '"text":"'];
    for (const slot of slots)
      expect(
        utf8.some((l) => l.bytes.toString("latin1").includes(slot)),
        slot,
      ).toBe(true);
    // Near misses of method names: every real name with every change.
    const near = new Set(unknownMethodNearMisses());
    for (const m of fc.sample(unknownMethod(), { numRuns: 2000, seed: 1 }))
      if (/^(rpc\.| )?(auth|ping|status|observe|events|act)s?$/i.test(m)) expect(near, m).toContain(m);
    // Numbers a double cannot hold: every listed one.
    const precise = new Set(preciseNumberClasses().map((p) => p.text));
    for (const text of [
      "1e400",
      "-1e400",
      "1E400",
      "1e-400",
      "18446744073709551617",
      "3.141592653589793238462643383279",
    ])
      expect(precise, text).toContain(text);
    // Valid JSON at the edges: every unpaired surrogate, every place, both duplicate names in both orders.
    const edges = validJsonEdgeClasses();
    expect(edges.filter((e) => e.kind === "lone-surrogate")).toHaveLength(7);
    expect(new Set(edges.filter((e) => e.kind === "lone-surrogate").map((e) => e.place))).toEqual(
      new Set(["id", "method", "params"]),
    );
    expect(new Set(edges.filter((e) => e.kind === "duplicate-key").map((e) => e.text)).size).toBe(4);
    // Deep nesting: every place with every bracket.
    const deep = new Set(deepNestingClasses().map((d) => `${d.place}/${d.bracket}`));
    for (const { place, bracket } of fc.sample(deepNesting(), { numRuns: 200, seed: 1 }))
      expect(deep).toContain(`${place}/${bracket}`);
  });

  it("quick finds a parser lenient to one value of a four-value class, whatever the seed", async () => {
    // NaN is taken, -NaN, Infinity and -Infinity refused: a random draw of the class finds it by chance only.
    const nanOnly = mutants.find((m) => m.name === "accepts-nan-only")!;
    const check = allChecks.filter((c) => c.id === "error.parse/non-json");
    for (const seed of [1, 2, 3, 4, 5]) {
      const report = await runSuite((token) => nanOnly.create({ token }), {
        checks: check,
        profile: "quick",
        timeoutMs: 400,
        seed,
      });
      expect(verdictOf(report, "error.parse"), `seed ${seed}`).toBe("fail");
      const found = report.rules.flatMap((r) => r.checks).find((c) => c.id === "error.parse/non-json")!;
      expect(found.counterexample, `seed ${seed}`).toMatch(/:NaN,/);
    }
  });
});
