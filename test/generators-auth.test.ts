import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import {
  describeNearMiss,
  NEAR_MISS_KINDS,
  nearMissParams,
  type TokenNearMiss,
  tokenNearMiss,
} from "../generators/tokenNearMiss.js";
import { allChecks } from "../suites/index.js";
import { runSuite, TEST_TOKEN } from "./helpers.js";

// tokenNearMiss promises near misses of any non-empty token that are never the token itself,
// described without showing it.

const RUNS = { numRuns: 300 };
const tokens = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 }),
  fc.constantFrom("conformance-test-token-7f3a", "12345678", "t", "ALLCAPS", "tökén-ß-令牌-😀"),
);
const seen = <T, U>(arb: fc.Arbitrary<T>, f: (v: T) => U, n = 2000) =>
  new Set(fc.sample(arb, { numRuns: n, seed: 7 }).map(f));

describe("tokenNearMiss", () => {
  it("never yields the token itself, as a string or anything that stringifies to it but an array", () => {
    fc.assert(
      fc.property(tokens, tokenNearMiss(), (token, miss) => {
        const params = nearMissParams(token, miss);
        if (params === undefined) return;
        expect(params.token).not.toBe(token);
        if (miss.kind === "wrapped") expect(params.token).toEqual([token]);
        else if (miss.kind === "missing") expect(params).toEqual({});
        else expect(params.token).toBeTypeOf("string");
      }),
      RUNS,
    );
  });

  it("draws every kind by default", () => {
    expect(seen(tokenNearMiss(), (m) => m.kind)).toEqual(new Set(NEAR_MISS_KINDS));
  });

  it("honours the kinds constraint", () => {
    expect(seen(tokenNearMiss({ kinds: ["prefix", "empty"] }), (m) => m.kind)).toEqual(new Set(["prefix", "empty"]));
  });

  it("honours maxSuffixLength (padding and NUL-led suffixes aside)", () => {
    fc.assert(
      fc.property(tokenNearMiss({ kinds: ["extended"], maxSuffixLength: 2 }), (m) => {
        const { suffix } = m as Extract<TokenNearMiss, { kind: "extended" }>;
        expect(suffix.length).toBeGreaterThan(0);
        if (!suffix.startsWith("\u0000") && !/^\s+$/.test(suffix)) expect(suffix.length).toBeLessThanOrEqual(2);
      }),
      RUNS,
    );
  });

  it("applies each kind as its name says", () => {
    const token = "Tok3n-abc";
    expect(nearMissParams(token, { kind: "prefix", keep: 3 })).toEqual({ token: "Tok" });
    expect(nearMissParams(token, { kind: "prefix", keep: 9 + 3 })).toEqual({ token: "Tok" });
    expect(nearMissParams(token, { kind: "prefix", keep: 0 })).toEqual({ token: "" });
    expect(nearMissParams(token, { kind: "extended", suffix: "\u0000x" })).toEqual({ token: "Tok3n-abc\u0000x" });
    expect(nearMissParams(token, { kind: "case", change: "upper" })).toEqual({ token: "TOK3N-ABC" });
    expect(nearMissParams(token, { kind: "case", change: "lower" })).toEqual({ token: "tok3n-abc" });
    expect(nearMissParams(token, { kind: "case", change: "swap" })).toEqual({ token: "tOK3N-ABC" });
    expect(nearMissParams(token, { kind: "padded", where: "trailing", pad: "\n" })).toEqual({ token: "Tok3n-abc\n" });
    expect(nearMissParams(token, { kind: "padded", where: "leading", pad: " " })).toEqual({ token: " Tok3n-abc" });
    expect(nearMissParams(token, { kind: "empty" })).toEqual({ token: "" });
    expect(nearMissParams(token, { kind: "changed", at: 0, to: 0 })).toEqual({ token: "aok3n-abc" });
    // The pick equals the character already there, so the next one is taken.
    expect(nearMissParams(token, { kind: "changed", at: 6, to: 0 })).toEqual({ token: "Tok3n-bbc" });
    expect(nearMissParams(token, { kind: "wrapped" })).toEqual({ token: [token] });
    expect(nearMissParams(token, { kind: "missing" })).toEqual({});
  });

  it("a changed token differs in exactly one character and keeps its length", () => {
    fc.assert(
      fc.property(tokens, tokenNearMiss({ kinds: ["changed"] }), (token, miss) => {
        const changed = Array.from(nearMissParams(token, miss)!.token as string);
        const original = Array.from(token);
        expect(changed).toHaveLength(original.length);
        expect(changed.filter((c, i) => c !== original[i])).toHaveLength(1);
      }),
      RUNS,
    );
  });

  it("a prefix is strictly shorter than the token", () => {
    fc.assert(
      fc.property(tokens, tokenNearMiss({ kinds: ["prefix"] }), (token, miss) => {
        const prefix = nearMissParams(token, miss)!.token as string;
        expect(token.startsWith(prefix)).toBe(true);
        expect(prefix.length).toBeLessThan(token.length);
      }),
      RUNS,
    );
  });

  it("leaves out another case of a token without letters, which would be the token itself", () => {
    for (const change of ["upper", "lower", "swap"] as const)
      expect(nearMissParams("12345678", { kind: "case", change })).toBeUndefined();
  });

  it("describes a near miss without showing the token", () => {
    const token = "secret-token-value";
    fc.assert(
      fc.property(tokenNearMiss(), (miss) => {
        const text = describeNearMiss(token, miss);
        expect(text).not.toContain("secret");
        expect(text.toLowerCase()).not.toContain("token-value");
      }),
      RUNS,
    );
  });
});

describe("method.auth/near-miss, failing", () => {
  // The harness redacts the token itself; a near miss derived from it must not show either.
  it.each(["auth-prefix-compare", "auth-case-insensitive", "auth-refuses-yet-authorizes"])(
    "against %s, reports no near miss of the token",
    async (name) => {
      const mutant = mutants.find((m) => m.name === name)!;
      const report = await runSuite((token) => mutant.create({ token }), {
        checks: allChecks.filter((c) => c.id === "method.auth/near-miss"),
        timeoutMs: 400,
      });
      const failed = report.rules.flatMap((r) => r.checks).find((c) => c.verdict === "fail");
      expect(failed?.transcript?.length).toBeGreaterThan(0);
      const text = JSON.stringify(report);
      const half = TEST_TOKEN.slice(0, Math.floor(TEST_TOKEN.length / 2));
      for (const leak of [TEST_TOKEN, half, TEST_TOKEN.toUpperCase(), TEST_TOKEN.slice(1), TEST_TOKEN.slice(0, -1)])
        expect(text).not.toContain(leak);
    },
  );
});
