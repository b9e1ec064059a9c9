import fc from "fast-check";
import { contract } from "../protocol/contract.js";

/** The envelope version, as JSON text. */
const JSONRPC = JSON.stringify(contract.jsonrpc);

export interface OversizedLineConstraints {
  /** The payload limit before the LF. Default: the contract's max_line_bytes (1,048,576, 1 MiB). */
  maxLineBytes?: number;
  /** Largest number of bytes past the limit. Default: 65,536. */
  maxExcess?: number;
  /** Whether the bytes after the limit may hold a complete valid request (which a bridge must never run). Default: true. */
  tails?: boolean;
}

/**
 * An oversized line, described rather than built so counterexamples stay readable:
 * `excess` bytes past the limit; `tail` puts a valid request after the limit (the
 * line is then at least the tail's length past it).
 * Build the bytes with `oversizedBytes`.
 */
export interface OversizedLine {
  excess: number;
  tail: boolean;
}

export const TAIL_ID = "executed-tail-of-oversized-line";

/** The boundary (+1) and beyond; padding is JSON whitespace, so size is the only fault. */
export function oversizedLine(constraints: OversizedLineConstraints = {}): fc.Arbitrary<OversizedLine> {
  const { maxExcess = 65_536, tails = true } = constraints;
  return fc.record({
    excess: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: maxExcess })),
    tail: tails ? fc.boolean() : fc.constant(false),
  });
}

/** A request padded with whitespace to exactly `payload` bytes (before the LF). */
export function paddedRequest(payload: number, id: unknown = "padded"): Buffer {
  return padded(payload, id, 0);
}

/** The bytes of an oversized line, LF included: built in one buffer, as they are a megabyte and made for every case. */
export function oversizedBytes(line: OversizedLine, maxLineBytes = contract.limits.maxLineBytes): Buffer {
  if (!line.tail) return padded(maxLineBytes + line.excess, "oversized", 1);
  // Everything up to the limit is an unfinished request; the tail after it is a complete one.
  const tail = `{"jsonrpc":${JSONRPC},"id":"${TAIL_ID}","method":"ping","params":{}}\n`;
  const prefix = `{"jsonrpc":${JSONRPC},"id":"oversized","method":"ping","params":{"pad":"`;
  const head = maxLineBytes + Math.max(0, line.excess - (tail.length - 1));
  const out = Buffer.allocUnsafe(head + tail.length).fill(0x61, 0, head); // "a": inside an unfinished string
  out.write(prefix, 0, "latin1");
  out.write(tail, head, "latin1");
  return out;
}

/** A ping padded with spaces to `payload` bytes, and `lf` line feeds after it. */
function padded(payload: number, id: unknown, lf: 0 | 1): Buffer {
  const head = `{"jsonrpc":${JSONRPC},"id":${JSON.stringify(id)},"method":"ping","params":{}`;
  if (payload < head.length + 1) throw new RangeError(`payload of ${payload} bytes is too small for a request`);
  const out = Buffer.allocUnsafe(payload + lf).fill(0x20, 0, payload);
  out.write(head, 0, "utf8");
  out[payload - 1] = 0x7d; // "}"
  if (lf) out[payload] = 0x0a;
  return out;
}
