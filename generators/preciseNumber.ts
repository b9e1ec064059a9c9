import fc from "fast-check";
import { interleave } from "./domain.js";

/**
 * "big-integer" an integer beyond ±(2^53 − 1), where IEEE 754 doubles stop holding every integer;
 * "long-fraction" a decimal with more significant digits than a double keeps (RFC 8259 section 6's
 * 3.141592653589793238462643383279); "out-of-range" an exponent no double reaches (1e400, 1e-400).
 */
export type PreciseKind = "big-integer" | "long-fraction" | "out-of-range";

export interface PreciseNumberConstraints {
  /** Kinds to draw. Default: all three. */
  kinds?: PreciseKind[];
  /** Most digits of a big integer or a long fraction (at least 18 are allowed). Default: 40. */
  maxDigits?: number;
}

/** A JSON number's text, and what kind of precision it asks for. */
export interface PreciseNumber {
  kind: PreciseKind;
  text: string;
}

const digits = (min: number, max: number) =>
  fc
    .tuple(
      fc.integer({ min: 1, max: 9 }),
      fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min - 1, maxLength: max - 1 }),
    )
    .map(([lead, rest]) => `${lead}${rest}`);

const sign = fc.constantFrom("", "-");

/** Each kind's listed numbers, drawn beside its generated ones: a check's classes (`preciseNumberClasses`). */
const LISTED: Record<PreciseKind, readonly string[]> = {
  "big-integer": ["12345678901234567890", "-12345678901234567890", "9007199254740993", "18446744073709551617"],
  "long-fraction": ["3.141592653589793238462643383279"],
  "out-of-range": ["1e400", "-1e400", "1E400", "1e-400"],
};

const KINDS: Record<PreciseKind, (maxDigits: number) => fc.Arbitrary<string>> = {
  // 17 digits and more: above 2^53 (16 digits) by construction.
  "big-integer": (maxDigits) =>
    fc.oneof(
      fc.constantFrom(...LISTED["big-integer"]),
      fc.tuple(sign, digits(17, maxDigits)).map(([s, d]) => `${s}${d}`),
    ),
  // 18 significant digits and more, one of them after the point.
  "long-fraction": (maxDigits) =>
    fc.oneof(
      fc.constantFrom(...LISTED["long-fraction"]),
      fc
        .tuple(sign, digits(18, maxDigits), fc.integer({ min: 1, max: 17 }))
        .map(([s, d, point]) => `${s}${d.slice(0, point)}.${d.slice(point)}1`),
    ),
  "out-of-range": () =>
    fc.oneof(
      fc.constantFrom(...LISTED["out-of-range"]),
      fc
        .tuple(
          sign,
          fc.integer({ min: 1, max: 9 }),
          fc.constantFrom("e", "E", "e+", "e-"),
          fc.integer({ min: 400, max: 9999 }),
        )
        .map(([s, m, e, x]) => `${s}${m}${e}${x}`),
    ),
};

/** Whether a double holding `text` gives back another number (or none: Infinity is not JSON). */
export function lostInDouble(text: string): boolean {
  return exactDecimal(JSON.stringify(JSON.parse(text))) !== exactDecimal(text);
}

/**
 * JSON numbers a double cannot hold exactly, so a bridge that keeps ids as doubles echoes another number
 * (`lostInDouble` holds for every one): the id a bridge must still echo as the same number.
 */
export function preciseNumber(constraints: PreciseNumberConstraints = {}): fc.Arbitrary<PreciseNumber> {
  const { kinds = ["big-integer", "long-fraction", "out-of-range"], maxDigits = 40 } = constraints;
  return fc
    .constantFrom(...kinds)
    .chain((kind) => KINDS[kind](Math.max(18, maxDigits)).map((text) => ({ kind, text })))
    .filter(({ text }) => lostInDouble(text));
}

/** Every listed number of every kind, one of each kind first: what a check tries before generated ones. */
export function preciseNumberClasses(kinds: readonly PreciseKind[] = ["big-integer", "long-fraction", "out-of-range"]) {
  return interleave(kinds.map((kind) => LISTED[kind].map((text) => ({ kind, text }))));
}

/**
 * The exact decimal value of a JSON number's text, canonical: sign, significant digits without
 * leading or trailing zeros, and the exponent of the last digit ("0" for every zero).
 * Two number texts denote the same JSON value exactly when their canonical forms are equal.
 */
export function exactDecimal(text: string): string | undefined {
  const m = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const [, s, int, frac = "", exp = "0"] = m;
  let all = `${int}${frac}`.replace(/^0+/, "");
  if (all === "") return "0";
  let e = BigInt(exp) - BigInt(frac.length);
  const trimmed = all.replace(/0+$/, "");
  e += BigInt(all.length - trimmed.length);
  all = trimmed;
  return `${s}${all}e${e}`;
}
