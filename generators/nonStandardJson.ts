import fc from "fast-check";
import { contract } from "../protocol/contract.js";
import { classesOf, type Domain, drawFrom, interleave } from "./domain.js";

/** The envelope version, as JSON text. */
const JSONRPC = JSON.stringify(contract.jsonrpc);

export interface NonStandardJsonConstraints {
  /** Which kinds to draw. Default: all of them. */
  kinds?: NonStandardKind[];
}

export type NonStandardKind =
  | "nan-infinity"
  | "comment"
  | "trailing-comma"
  | "single-quotes"
  | "bad-number"
  | "control-char"
  | "bad-escape"
  | "bom"
  | "truncated"
  | "trailing-garbage"
  | "unquoted-key"
  | "bad-literal";

export interface NonStandardJsonLine {
  kind: NonStandardKind;
  text: string;
}

const HEAD = `{"jsonrpc":${JSONRPC},"id":1,"method":"ping","params":{}`;
const VALID = `${HEAD}}`;
const withId = (id: string) => `{"jsonrpc":${JSONRPC},"id":${id},"method":"ping","params":{}}`;
const withMethod = (raw: string) => `{"jsonrpc":${JSONRPC},"id":1,"method":"${raw}","params":{}}`;
const controlIn = (c: number) => withMethod(`pi${String.fromCharCode(c)}ng`);

/** What RFC 8259 rejects but lenient parsers take (JSONTestSuite's n_ categories), each wrapped around a ping request. */
const DOMAINS: Record<NonStandardKind, Domain<string>> = {
  // Lenient parsers differ on each: Python's json takes NaN, Infinity and -Infinity but not -NaN.
  "nan-infinity": { values: ["NaN", "Infinity", "-Infinity", "-NaN"].map(withId) },
  comment: {
    values: [
      `/* c */${VALID}`,
      `${VALID}// c`,
      `{"jsonrpc":${JSONRPC},/* c */"id":1,"method":"ping","params":{}}`,
      `${VALID}#c`,
    ],
  },
  "trailing-comma": {
    values: [
      `${HEAD},}`,
      `{"jsonrpc":${JSONRPC},"id":[1,],"method":"ping","params":{}}`,
      `{"jsonrpc":${JSONRPC},"id":1,"method":"ping","params":{"a":1,}}`,
    ],
  },
  "single-quotes": { values: [`{'jsonrpc':'2.0','id':1,'method':'ping','params':{}}`, withId(`'x'`)] },
  "bad-number": { values: ["01", "-01", "1.", ".5", "+1", "0x10", "1e", "1.e3", "- 1", "1_000", "0b1"].map(withId) },
  "control-char": {
    range: fc
      .integer({ min: 0, max: 0x1f })
      .filter((c) => c !== 0x0a)
      .map(controlIn),
    // NUL, a tab and a CR (which lenient readers skip as whitespace), and the last of the range.
    ends: [0x00, 0x09, 0x0d, 0x1f].map(controlIn),
  },
  "bad-escape": { values: ["\\x41", "\\u12", "\\a", "\\'", "\\U0041", "\\", "\\u{41}"].map(withMethod) },
  bom: { values: [`\ufeff${VALID}`] },
  truncated: {
    range: fc.integer({ min: 1, max: VALID.length - 1 }).map((n) => VALID.slice(0, n)),
    ends: [VALID.slice(0, 1), VALID.slice(0, -1)],
  },
  "trailing-garbage": {
    values: [`${VALID}x`, `${VALID}}`, `${VALID}{}`, `${VALID},`, `${VALID} ${VALID}`, `${VALID}\u0000`],
  },
  "unquoted-key": {
    values: [
      `{jsonrpc:"2.0","id":1,"method":"ping","params":{}}`,
      `{"jsonrpc":${JSONRPC},id:1,"method":"ping","params":{}}`,
    ],
  },
  "bad-literal": { values: ["True", "FALSE", "nul", "undefined", "None"].map(withId) },
};

const ALL = Object.keys(DOMAINS) as NonStandardKind[];

/** Single lines of valid UTF-8 that are not RFC 8259 JSON. */
export function nonStandardJson(constraints: NonStandardJsonConstraints = {}): fc.Arbitrary<NonStandardJsonLine> {
  const { kinds: chosen = ALL } = constraints;
  return fc.constantFrom(...chosen).chain((kind) => drawFrom(DOMAINS[kind]).map((text) => ({ kind, text })));
}

/** Every line of every kind's finite domain (a range's ends), one of each kind first: a check's classes. */
export function nonStandardJsonClasses(constraints: NonStandardJsonConstraints = {}): NonStandardJsonLine[] {
  const { kinds: chosen = ALL } = constraints;
  return interleave(chosen.map((kind) => classesOf(DOMAINS[kind]).map((text) => ({ kind, text }))));
}
