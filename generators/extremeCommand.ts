import fc from "fast-check";
import { contract, type FieldKind } from "../protocol/contract.js";
import type { Command } from "./command.js";

export interface ExtremeCommandConstraints {
  /** Command types to draw from (e.g. the bridge's availableActions). Default: ["conformance.extreme"]. */
  types?: string[];
  /** Which field kinds may take extreme values (one or more of them per command). Default: all four. */
  kinds?: FieldKind[];
  /** Longest long string, in characters. Default: 2000. */
  longLength?: number;
}

/** The extremes of each kind's legal values: where a parser's or a game's integer width shows. */
export const EXTREMES = (longLength = 2000): Record<FieldKind, readonly unknown[]> => ({
  integer: [Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 0, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 32],
  identifier: [0, Number.MAX_SAFE_INTEGER, "", "x".repeat(longLength), "\u{1f3ae}", "0"],
  string: ["", "x".repeat(longLength), "\u{1d11e}".repeat(64), "\u0000\u001f\u2028\u2029", '"\\/'],
  boolean: [true, false],
});

/**
 * Legal commands whose standard fields of some kinds all take extreme values: safe-integer edges,
 * the empty and long identifier or string, astral and control characters. The kinds drawn are
 * reported, so a step knows which cells it reaches.
 */
export function extremeCommand(
  constraints: ExtremeCommandConstraints = {},
): fc.Arbitrary<{ kinds: FieldKind[]; command: Command }> {
  const {
    types = ["conformance.extreme"],
    kinds = ["integer", "identifier", "string", "boolean"],
    longLength = 2000,
  } = constraints;
  const extremes = EXTREMES(longLength);
  return fc.subarray(kinds, { minLength: 1 }).chain((chosen) => {
    const fields = contract.commandFields.filter((f) => chosen.includes(f.kind));
    return fc
      .record({
        type: fc.constantFrom(...types),
        values: fc.tuple(...fields.map((f) => fc.constantFrom(...extremes[f.kind]))),
      })
      .map(({ type, values }) => ({
        kinds: chosen,
        command: { type, ...Object.fromEntries(fields.map((f, i) => [f.field, values[i]])) } as Command,
      }));
  });
}
