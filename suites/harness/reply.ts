// A reply as the harness reads it: judged whole, or, where no LF came, a complete JSON object
// the bridge never ended.
import { clip, type Response, violation } from "./check.js";
import type { Line } from "./connection.js";

/** Opens the violation of a reply that came whole but without the LF that ends it. */
export const UNTERMINATED = "A complete JSON reply came without the LF that ends it";

/** Bytes left without an LF at the timeout: a complete JSON object there is a reply the bridge never ended. */
export function unterminated(tail: Buffer): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(tail.toString("utf8"));
  } catch {
    return;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return;
  throw violation(
    "wire.ndjson",
    `${UNTERMINATED}: no LF followed it within the timeout.`,
    "each response line ends with LF",
    `${tail.length} bytes without LF: ${clip(tail.toString("utf8"))}`,
  );
}

/** A judged reply; its bytes are made only if a check asks for them. */
export class Judged {
  readonly kind = "response";
  constructor(
    readonly response: Response,
    private readonly line: Line,
  ) {}

  get raw(): Buffer {
    return this.line.bytes;
  }
}
