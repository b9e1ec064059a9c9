import fc from "fast-check";
import { contract } from "../protocol/contract.js";

/** UTF-8 bytes per character of the filler: 1 (a), 2 (é U+00E9), 3 (€ U+20AC), 4 (𝄞 U+1D11E). */
export type CharWidth = 1 | 2 | 3 | 4;

/**
 * What fills the line up to its size: "chars" more filler characters inside a string; "spaces" the JSON text
 * ends at the limit and the excess is trailing spaces; "cr" likewise, the last of them a CR before the LF.
 */
export type LimitPadding = "chars" | "spaces" | "cr";

export interface LimitLineConstraints {
  /** Filler character widths to draw. Default: all four. */
  widths?: CharWidth[];
  /** Paddings to draw. Default: all three. */
  paddings?: LimitPadding[];
  /** Largest number of bytes past the limit; 0 draws only lines of exactly the limit. Default: 4. */
  maxExcess?: number;
}

/**
 * A ping line at or just over the line limit, its string filled with characters of one UTF-8 width, described
 * rather than built so counterexamples stay readable. The payload before the LF is exactly the limit plus
 * `excess` bytes (excess 0: exactly the limit, which is legal). Build the bytes with `limitLineBytes`.
 */
export interface LimitLine {
  width: CharWidth;
  excess: number;
  padding: LimitPadding;
}

export const LIMIT_ID = "limit-line";

export const FILLER: Record<CharWidth, string> = { 1: "a", 2: "\u00e9", 3: "\u20ac", 4: "\u{1d11e}" };

/** Lines at and over the limit, built from 1- to 4-byte UTF-8 characters. */
export function limitLine(constraints: LimitLineConstraints = {}): fc.Arbitrary<LimitLine> {
  const { widths = [1, 2, 3, 4], paddings = ["chars", "spaces", "cr"], maxExcess = 4 } = constraints;
  return fc.record({
    width: fc.constantFrom(...widths),
    excess: fc.oneof(fc.constant(0), fc.constant(Math.min(1, maxExcess)), fc.integer({ min: 0, max: maxExcess })),
    padding: fc.constantFrom(...paddings),
  });
}

/** Trailing whitespace after the JSON text: all of the excess (at least one byte) unless padding is "chars". */
export function trailingOf(line: LimitLine): string {
  if (line.padding === "chars") return "";
  const n = Math.max(1, line.excess);
  return line.padding === "spaces" ? " ".repeat(n) : `${" ".repeat(n - 1)}\r`;
}

/**
 * The bytes of the line, LF included: `{"jsonrpc":..,"id":LIMIT_ID,"method":"ping","params":{"text":"..."}}`
 * plus the trailing whitespace, exactly `maxLineBytes + excess` bytes before the LF. The string holds
 * characters of `width` bytes, led by fewer than `width` ASCII letters to hit the size exactly.
 * Throws RangeError when the limit is too small for the request (about 80 bytes).
 */
export function limitLineBytes(line: LimitLine, maxLineBytes = contract.limits.maxLineBytes): Buffer {
  const trailing = trailingOf(line);
  const head = `{"jsonrpc":${JSON.stringify(contract.jsonrpc)},"id":"${LIMIT_ID}","method":"ping","params":{"text":"`;
  const tail = `"}}${trailing}`;
  const fill = maxLineBytes + line.excess - head.length - tail.length;
  if (fill < 0) throw new RangeError(`a limit of ${maxLineBytes} bytes is too small for the request`);
  const chars = Math.floor(fill / line.width);
  const out = Buffer.alloc(maxLineBytes + line.excess + 1);
  let at = out.write(head, 0, "latin1");
  at += out.write("a".repeat(fill - chars * line.width), at, "latin1");
  out.fill(Buffer.from(FILLER[line.width], "utf8"), at, at + chars * line.width);
  at += chars * line.width;
  at += out.write(tail, at, "latin1");
  out[at] = 0x0a;
  return out;
}
