import { isDeepStrictEqual } from "node:util";
import { exactDecimal } from "../../generators/preciseNumber.js";
import type { Contract } from "../../protocol/contract.js";
import { clip, type Response, violation } from "./check.js";
// It keeps a leading byte order mark in the text instead of dropping it silently, so it is judged below.
import { strictUtf8 } from "./connection.js";

/**
 * Judges one response line against the framing and envelope rules. Every reply
 * passes through here, so a malformed response fails its rule whatever the check was about.
 */
/** The errors of a request the bridge could not read (parse error, invalid request): null is the right id. */
export const unreadableCodes = (contract: Contract) => ({
  parse: contract.codes["error.parse"],
  invalidRequest: contract.codes["error.invalid-request"],
});

export interface IdExpectation {
  /** Also accept id null. */
  orNullId?: boolean;
  /** Accept any id (the request's id was unreadable by design, e.g. malformed UTF-8 inside it). */
  anyId?: boolean;
}

export function judgeResponse(
  raw: Buffer,
  expectedId: unknown,
  contract: Contract,
  expect: IdExpectation = {},
): Response {
  return judgeText(decodeLine(raw), expectedId, contract, expect);
}

/** A response line's text: strict UTF-8 without a byte order mark, or the rule it breaks. */
export function decodeLine(raw: Buffer): string {
  let text: string;
  try {
    text = strictUtf8.decode(raw);
  } catch {
    throw violation(
      "wire.utf8",
      "The response is not strict UTF-8.",
      "a UTF-8 encoded JSON line",
      `bytes (base64) ${clip(raw.toString("base64"))}`,
    );
  }
  return unmarked(text);
}

/** A response line's strict UTF-8 text, or the rule it breaks by starting with a byte order mark. */
export function unmarked(text: string): string {
  // EF BB BF is well-formed UTF-8 (U+FEFF), so wire.utf8 holds; but U+FEFF is not JSON whitespace and RFC 8259
  // section 8.1 forbids adding it to networked JSON: the line no longer holds one JSON object (wire.ndjson), just as
  // a request with a BOM is a parse error rather than an encoding fault.
  if (text.startsWith("\ufeff"))
    throw violation(
      "wire.ndjson",
      "The response line starts with a byte order mark (EF BB BF), which is not JSON.",
      "one JSON object per line, without a byte order mark",
      `\\ufeff${clip(text.slice(1))}`,
    );
  return text;
}

/** Judges a response line's decoded text (see judgeResponse). */
export function judgeText(text: string, expectedId: unknown, contract: Contract, expect: IdExpectation = {}): Response {
  // A CR before the LF passes: the contract terminates lines with LF, and CR is JSON whitespace (RFC 8259 section 2),
  // so "{...}\r" is still one JSON object ending at the LF; a client splitting on LF reads it unchanged.
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw violation("wire.ndjson", "The response line is not JSON.", "one JSON object per line", clip(text));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw violation("wire.ndjson", "The response line is not a JSON object.", "one JSON object per line", clip(text));
  }
  const r = value as Record<string, unknown>;
  const envelope = (message: string, expected: string) =>
    violation("wire.response-envelope", message, expected, clip(text));
  if (r.jsonrpc !== contract.jsonrpc)
    throw envelope(`The response's jsonrpc is not "${contract.jsonrpc}".`, `"jsonrpc":"${contract.jsonrpc}"`);
  if (!("id" in r)) throw envelope("The response has no id.", `"id":${JSON.stringify(expectedId)}`);
  const hasResult = "result" in r;
  const hasError = "error" in r;
  if (hasResult === hasError)
    throw envelope("The response must contain exactly one of result and error.", "exactly one of result / error");
  if (hasError) {
    const e = r.error as Record<string, unknown> | null;
    if (
      typeof e !== "object" ||
      e === null ||
      Array.isArray(e) ||
      !Number.isInteger(e.code) ||
      typeof e.message !== "string"
    ) {
      throw envelope(
        "The error member must be an object with an integer code and a string message.",
        `"error":{"code":<integer>,"message":<string>}`,
      );
    }
  }
  // A request the bridge could not read (parse error, invalid request) has no id to echo: null is right.
  const codes = unreadableCodes(contract);
  const unreadable =
    hasError && r.id === null && [codes.parse, codes.invalidRequest].includes((r.error as { code: number }).code);
  const echoed = Object.is(r.id, expectedId) || isDeepStrictEqual(r.id, expectedId); // the same value is the common case
  if (!expect.anyId && !echoed && !(expect.orNullId && r.id === null) && !unreadable) {
    throw envelope(
      "The response does not echo the request id as the same JSON value and type.",
      `"id":${clip(JSON.stringify(expectedId), 120)}`,
    );
  }
  return r as unknown as Response;
}

/**
 * The first member name an object of this JSON text holds twice, or undefined. RFC 8259
 * section 4: names within an object SHOULD be unique; a reader's behaviour with repeated ones
 * is unpredictable (the last wins, the first wins, or an error). The text is already JSON.
 */
export function repeatedName(text: string): string | undefined {
  const objects: (Set<string> | undefined)[] = []; // one entry per open container; undefined for arrays
  let expectKey = false;
  for (let at = 0; at < text.length; at++) {
    const c = text[at]!;
    if (c === '"') {
      const start = at;
      for (at++; at < text.length && text[at] !== '"'; at++) if (text[at] === "\\") at++;
      const names = objects[objects.length - 1];
      if (expectKey && names) {
        const raw = text.slice(start + 1, at);
        const name = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (names.has(name)) return name;
        names.add(name);
      }
      expectKey = false;
    } else if (c === "{") {
      objects.push(new Set());
      expectKey = true;
    } else if (c === "[") {
      objects.push(undefined);
      expectKey = false;
    } else if (c === "}" || c === "]") {
      objects.pop();
    } else if (c === ",") {
      expectKey = objects[objects.length - 1] !== undefined;
    }
  }
  return undefined;
}

/**
 * The JSON text of a top-level member of a JSON object's text (the last one of that name, as JSON.parse reads it),
 * or undefined. The text is already known to be one JSON object (it passed the judge). The judge compares parsed
 * values, where a double loses digits (12345678901234567890); a check that needs the id as written reads it here.
 */
export function memberText(text: string, name: string): string | undefined {
  let at = 0;
  let found: string | undefined;
  const ws = () => {
    while (" \t\r\n".includes(text[at] ?? "x")) at++;
  };
  const skipString = () => {
    for (at++; at < text.length && text[at] !== '"'; at++) if (text[at] === "\\") at++;
    at++;
  };
  const skipValue = () => {
    if (text[at] === '"') return skipString();
    let depth = 0;
    for (; at < text.length; at++) {
      const c = text[at]!;
      if (c === '"') {
        skipString();
        at--;
      } else if (c === "[" || c === "{") depth++;
      else if (c === "]" || c === "}") {
        if (depth === 0) return;
        depth--;
      } else if (depth === 0 && (c === "," || " \t\r\n".includes(c))) return;
    }
  };
  ws();
  at++; // {
  for (;;) {
    ws();
    if (text[at] !== '"') return found;
    const start = at;
    skipString();
    const key = JSON.parse(text.slice(start, at)) as string;
    ws();
    at++; // :
    ws();
    const from = at;
    skipValue();
    if (key === name) found = text.slice(from, at).trim();
    ws();
    if (text[at] !== ",") return found;
    at++;
  }
}

/** The number tokens of a JSON text, in order (strings skipped, so digits inside them are not numbers). */
const numbersIn = (text: string) =>
  [...text.matchAll(/"(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*/g)].map((m) => m[0]).filter((t) => !t.startsWith('"'));

/**
 * Whether two JSON texts hold the same JSON value, numbers compared exactly as decimals: the same shape and
 * strings, numbers as zero; then the numbers in order by exact value (so 1.0 is 1, and 12345678901234567000 is not
 * 12345678901234567890). Numbers are paired in the order written: meant for values holding at most one number, or
 * whose objects keep their members' order.
 */
export function sameJsonValue(a: string, b: string): boolean {
  const shape = (t: string) => JSON.parse(t, (_key, value) => (typeof value === "number" ? 0 : value)) as unknown;
  try {
    if (!isDeepStrictEqual(shape(a), shape(b))) return false;
  } catch {
    return false;
  }
  const x = numbersIn(a).map(exactDecimal);
  const y = numbersIn(b).map(exactDecimal);
  return x.length === y.length && x.every((d, i) => d !== undefined && d === y[i]);
}
