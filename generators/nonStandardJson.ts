import fc from "fast-check";
import { contract } from "../protocol/contract.js";

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

/** What RFC 8259 rejects but lenient parsers take (JSONTestSuite's n_ categories), each wrapped around a ping request. */
const kinds: Record<NonStandardKind, fc.Arbitrary<string>> = {
  "nan-infinity": fc.constantFrom("NaN", "Infinity", "-Infinity", "-NaN").map(withId),
  comment: fc.constantFrom(
    `/* c */${VALID}`,
    `${VALID}// c`,
    `{"jsonrpc":${JSONRPC},/* c */"id":1,"method":"ping","params":{}}`,
    `${VALID}#c`,
  ),
  "trailing-comma": fc.constantFrom(
    `${HEAD},}`,
    `{"jsonrpc":${JSONRPC},"id":[1,],"method":"ping","params":{}}`,
    `{"jsonrpc":${JSONRPC},"id":1,"method":"ping","params":{"a":1,}}`,
  ),
  "single-quotes": fc.constantFrom(`{'jsonrpc':'2.0','id':1,'method':'ping','params':{}}`, withId(`'x'`)),
  "bad-number": fc.constantFrom("01", "-01", "1.", ".5", "+1", "0x10", "1e", "1.e3", "- 1", "1_000", "0b1").map(withId),
  "control-char": fc
    .integer({ min: 0, max: 0x1f })
    .filter((c) => c !== 0x0a)
    .map((c) => withMethod(`pi${String.fromCharCode(c)}ng`)),
  "bad-escape": fc.constantFrom("\\x41", "\\u12", "\\a", "\\'", "\\U0041", "\\", "\\u{41}").map(withMethod),
  bom: fc.constant(`\ufeff${VALID}`),
  truncated: fc.integer({ min: 1, max: VALID.length - 1 }).map((n) => VALID.slice(0, n)),
  "trailing-garbage": fc.constantFrom(
    `${VALID}x`,
    `${VALID}}`,
    `${VALID}{}`,
    `${VALID},`,
    `${VALID} ${VALID}`,
    `${VALID}\u0000`,
  ),
  "unquoted-key": fc.constantFrom(
    `{jsonrpc:"2.0","id":1,"method":"ping","params":{}}`,
    `{"jsonrpc":${JSONRPC},id:1,"method":"ping","params":{}}`,
  ),
  "bad-literal": fc.constantFrom("True", "FALSE", "nul", "undefined", "None").map(withId),
};

const ALL = Object.keys(kinds) as NonStandardKind[];

/** Single lines of valid UTF-8 that are not RFC 8259 JSON. */
export function nonStandardJson(constraints: NonStandardJsonConstraints = {}): fc.Arbitrary<NonStandardJsonLine> {
  const { kinds: chosen = ALL } = constraints;
  return fc.constantFrom(...chosen).chain((kind) => kinds[kind].map((text) => ({ kind, text })));
}
