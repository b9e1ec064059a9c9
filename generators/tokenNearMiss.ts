import fc from "fast-check";

/**
 * How an auth attempt misses the configured token by a little. A near miss is a description,
 * not the token itself: it is applied to the token only when sent (nearMissParams), so a
 * shrunk counterexample never shows the secret.
 */
export type TokenNearMiss =
  /** The token's first `keep` characters; `keep` is taken modulo the token's length, so it is shorter (maybe empty). */
  | { kind: "prefix"; keep: number }
  /** The token followed by `suffix` (never empty). */
  | { kind: "extended"; suffix: string }
  /** The token in another case: all upper, all lower, or every letter's case swapped. */
  | { kind: "case"; change: "upper" | "lower" | "swap" }
  /** The token with one whitespace or control character before or after it. */
  | { kind: "padded"; where: "leading" | "trailing"; pad: string }
  /** An empty string. */
  | { kind: "empty" }
  /** One character replaced: the one at `at` modulo the token's length, by NEAR_MISS_CHARS[`to`] (or the next one). */
  | { kind: "changed"; at: number; to: number }
  /** The token as the only element of an array: not a string, but it stringifies to the token. */
  | { kind: "wrapped" }
  /** No token parameter at all. */
  | { kind: "missing" };

export type TokenNearMissKind = TokenNearMiss["kind"];

export const NEAR_MISS_KINDS: readonly TokenNearMissKind[] = [
  "prefix",
  "extended",
  "case",
  "padded",
  "empty",
  "changed",
  "wrapped",
  "missing",
];

/** Characters a changed token character becomes. */
export const NEAR_MISS_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.";

/** What a padded token is padded with: whitespace a lenient compare trims, and the NUL a C string ends at. */
export const NEAR_MISS_PADS = [" ", "\n", "\t", "\r", "\r\n", "\u00a0", "\u0000"] as const;

export interface TokenNearMissConstraints {
  /** Which kinds to draw. Default: NEAR_MISS_KINDS (all). */
  kinds?: readonly TokenNearMissKind[];
  /** Longest suffix of an extended token. Default: 8. */
  maxSuffixLength?: number;
}

/**
 * Near misses of a token, one kind per draw: a prefix, an extension, another case, whitespace or
 * NUL around it, empty, one character changed, wrapped in an array, missing. Each one applied to
 * any non-empty token gives params whose token is not that token (or no params at all where a
 * kind cannot differ from it, e.g. another case of a token without letters).
 */
export function tokenNearMiss(constraints: TokenNearMissConstraints = {}): fc.Arbitrary<TokenNearMiss> {
  const { kinds = NEAR_MISS_KINDS, maxSuffixLength = 8 } = constraints;
  const byKind: Record<TokenNearMissKind, fc.Arbitrary<TokenNearMiss>> = {
    prefix: fc.nat({ max: 1024 }).map((keep) => ({ kind: "prefix" as const, keep })),
    extended: fc
      .oneof(
        fc.string({ minLength: 1, maxLength: Math.max(1, maxSuffixLength) }),
        fc.constantFrom(...NEAR_MISS_PADS),
        fc.constant("\u0000garbage"),
      )
      .map((suffix) => ({ kind: "extended" as const, suffix })),
    case: fc.constantFrom("upper", "lower", "swap").map((change) => ({ kind: "case" as const, change })),
    padded: fc.record({
      kind: fc.constant("padded" as const),
      where: fc.constantFrom("leading", "trailing"),
      pad: fc.constantFrom(...NEAR_MISS_PADS),
    }),
    empty: fc.constant({ kind: "empty" as const }),
    changed: fc.record({
      kind: fc.constant("changed" as const),
      at: fc.nat({ max: 1024 }),
      to: fc.nat({ max: NEAR_MISS_CHARS.length - 1 }),
    }),
    wrapped: fc.constant({ kind: "wrapped" as const }),
    missing: fc.constant({ kind: "missing" as const }),
  };
  const chosen = kinds.length ? kinds : NEAR_MISS_KINDS;
  return fc.oneof(...chosen.map((k) => byKind[k]));
}

/** The auth params for a near miss of `token`, or undefined where it cannot differ from a non-empty token. */
export function nearMissParams(token: string, miss: TokenNearMiss): { token?: unknown } | undefined {
  const chars = Array.from(token);
  const differs = (value: string) => (value === token ? undefined : { token: value });
  switch (miss.kind) {
    case "prefix":
      return chars.length ? differs(chars.slice(0, miss.keep % chars.length).join("")) : undefined;
    case "extended":
      return differs(token + miss.suffix);
    case "case": {
      const swap = (c: string) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase());
      const changed =
        miss.change === "upper"
          ? token.toUpperCase()
          : miss.change === "lower"
            ? token.toLowerCase()
            : chars.map(swap).join("");
      return differs(changed);
    }
    case "padded":
      return differs(miss.where === "leading" ? miss.pad + token : token + miss.pad);
    case "empty":
      return differs("");
    case "changed": {
      if (!chars.length) return undefined;
      const at = miss.at % chars.length;
      const pick = NEAR_MISS_CHARS[miss.to % NEAR_MISS_CHARS.length]!;
      const next = NEAR_MISS_CHARS[(miss.to + 1) % NEAR_MISS_CHARS.length]!;
      chars[at] = chars[at] === pick ? next : pick;
      return differs(chars.join(""));
    }
    case "wrapped":
      return { token: [token] };
    case "missing":
      return {};
  }
}

/** A near miss in words, never showing the token: for messages. */
export function describeNearMiss(token: string, miss: TokenNearMiss): string {
  const length = Array.from(token).length;
  switch (miss.kind) {
    case "prefix": {
      const keep = length ? miss.keep % length : 0;
      return keep === 0
        ? "an empty string (a prefix of length 0)"
        : `the token's first ${keep} of ${length} characters`;
    }
    case "extended":
      return `the token followed by ${JSON.stringify(miss.suffix)}`;
    case "case":
      return miss.change === "swap" ? "the token with every letter's case swapped" : `the token in ${miss.change} case`;
    case "padded":
      return `the token with ${JSON.stringify(miss.pad)} ${miss.where === "leading" ? "before" : "after"} it`;
    case "empty":
      return "an empty string";
    case "changed":
      return `the token with character ${(length ? miss.at % length : 0) + 1} of ${length} changed`;
    case "wrapped":
      return "an array holding the token";
    case "missing":
      return "no token parameter";
  }
}
