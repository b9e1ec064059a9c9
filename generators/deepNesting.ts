import fc from "fast-check";
import { contract } from "../protocol/contract.js";

/**
 * Where the nesting goes: "params" balanced arrays inside a ping's params (valid JSON, a valid request);
 * "root" balanced arrays as the whole line (valid JSON, not a request object); "unbalanced" only the
 * opening brackets (not JSON).
 */
export type NestingPlace = "params" | "root" | "unbalanced";

export interface DeepNestingConstraints {
  /** Fewest levels. Default: 1,000. */
  minDepth?: number;
  /** Most levels. Default: 10,000. */
  maxDepth?: number;
  /** Places to draw. Default: all three. */
  places?: NestingPlace[];
  /** Brackets to nest: arrays, objects ({"a": ...}) or both. Default: both. */
  brackets?: ("array" | "object")[];
}

/** A deeply nested line, described; build the text with `deepNestingText`. */
export interface DeepNesting {
  place: NestingPlace;
  depth: number;
  bracket: "array" | "object";
}

export const DEEP_ID = "deep";

/** Nesting thousands of levels deep, where RFC 8259 section 9 lets a parser set a limit. */
export function deepNesting(constraints: DeepNestingConstraints = {}): fc.Arbitrary<DeepNesting> {
  const {
    minDepth = 1_000,
    maxDepth = 10_000,
    places = ["params", "root", "unbalanced"],
    brackets = ["array", "object"],
  } = constraints;
  return fc.record({
    place: fc.constantFrom(...places),
    depth: fc.oneof(fc.constant(maxDepth), fc.integer({ min: minDepth, max: maxDepth })),
    bracket: fc.constantFrom(...brackets),
  });
}

/**
 * Every place with every bracket at the deepest level: the classes a check tries first (a parser may limit the
 * depth of objects and not of arrays, or refuse an unbalanced line of one and not of the other).
 */
export function deepNestingClasses(depth = 10_000): DeepNesting[] {
  const places: NestingPlace[] = ["params", "root", "unbalanced"];
  return (["array", "object"] as const).flatMap((bracket) => places.map((place) => ({ place, depth, bracket })));
}

/** The line's text, without the LF. */
export function deepNestingText({ place, depth, bracket }: DeepNesting): string {
  const [open, close] = bracket === "array" ? ["[", "]"] : ['{"a":', "}"];
  const inner = bracket === "array" ? "" : "0";
  const nested = `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
  if (place === "root") return nested;
  if (place === "unbalanced") return open.repeat(depth);
  const jsonrpc = JSON.stringify(contract.jsonrpc);
  return `{"jsonrpc":${jsonrpc},"id":"${DEEP_ID}","method":"ping","params":{"deep":${nested}}}`;
}
