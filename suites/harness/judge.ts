import { isDeepStrictEqual } from "node:util";
import type { Contract } from "../../protocol/contract.js";
import { clip, type Response, violation } from "./check.js";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Judges one response line against the framing and envelope rules. Every reply
 * passes through here, so a malformed response fails its rule whatever the check was about.
 */
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
  const unreadable =
    hasError &&
    r.id === null &&
    [contract.codes["error.parse"], contract.codes["error.invalid-request"]].includes(
      (r.error as { code: number }).code,
    );
  if (!expect.anyId && !isDeepStrictEqual(r.id, expectedId) && !(expect.orNullId && r.id === null) && !unreadable) {
    throw envelope(
      "The response does not echo the request id as the same JSON value and type.",
      `"id":${clip(JSON.stringify(expectedId), 120)}`,
    );
  }
  return r as unknown as Response;
}
