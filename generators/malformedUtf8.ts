import fc from "fast-check";
import { contract } from "../protocol/contract.js";

/** The envelope version, as JSON text. */
const JSONRPC = JSON.stringify(contract.jsonrpc);

export type Utf8Fault = "overlong" | "surrogate" | "truncated" | "invalid-lead" | "lone-continuation" | "above-max";

export interface MalformedUtf8Constraints {
  /** Which faults to draw (Markus Kuhn's stress-test categories). Default: all. */
  faults?: Utf8Fault[];
  /** Where the bad bytes go: "raw" as the whole line, "in-string" inside a string of an otherwise valid request. Default: both. */
  placements?: ("raw" | "in-string")[];
}

export interface MalformedUtf8Line {
  fault: Utf8Fault;
  placement: "raw" | "in-string";
  bytes: Buffer;
}

/** Printable ASCII as is, every other byte as \xHH: how a counterexample reads best. */
export function escapeBytes(bytes: Buffer): string {
  return [...bytes]
    .map((b) =>
      b >= 0x20 && b < 0x7f && b !== 0x5c
        ? String.fromCharCode(b)
        : `\\x${b.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");
}

function line(fault: Utf8Fault, placement: "raw" | "in-string", bytes: Buffer): MalformedUtf8Line {
  return {
    fault,
    placement,
    bytes,
    [fc.toStringMethod]: () => `${fault}, ${placement}: ${escapeBytes(bytes)}`,
  } as MalformedUtf8Line;
}

const byte = (min: number, max: number) => fc.integer({ min, max });
const cont = byte(0x80, 0xbf);

/** Byte sequences that strict UTF-8 rejects. */
const faultBytes: Record<Utf8Fault, fc.Arbitrary<number[]>> = {
  // A code point in more bytes than needed, e.g. C0 AF for "/".
  overlong: fc.oneof(
    fc.tuple(byte(0xc0, 0xc1), cont),
    fc.tuple(fc.constant(0xe0), byte(0x80, 0x9f), cont),
    fc.tuple(fc.constant(0xf0), byte(0x80, 0x8f), cont, cont),
  ),
  // UTF-16 surrogates U+D800..U+DFFF encoded as UTF-8 (ED A0 80 ..).
  surrogate: fc.tuple(fc.constant(0xed), byte(0xa0, 0xbf), cont),
  // A multi-byte lead followed by too few continuation bytes.
  truncated: fc
    .oneof(fc.tuple(byte(0xc2, 0xdf)), fc.tuple(byte(0xe1, 0xec), cont), fc.tuple(byte(0xf1, 0xf3), cont, cont))
    .map((b) => [...b, 0x41]),
  // Bytes that never start a sequence.
  "invalid-lead": fc.oneof(byte(0xc0, 0xc1), byte(0xf5, 0xff)).map((b) => [b]),
  "lone-continuation": fc.array(cont, { minLength: 1, maxLength: 3 }),
  // Code points above U+10FFFF.
  "above-max": fc.oneof(
    fc.tuple(fc.constant(0xf4), byte(0x90, 0xbf), cont, cont),
    fc.tuple(byte(0xf5, 0xf7), cont, cont, cont),
  ),
};

/** Every fault, in the order above. */
export const UTF8_FAULTS: readonly Utf8Fault[] = [
  "overlong",
  "surrogate",
  "truncated",
  "invalid-lead",
  "lone-continuation",
  "above-max",
];

/** The strings of a request the bad bytes go inside ("in-string"): before and after them. */
const SLOTS = {
  method: [`{"jsonrpc":${JSONRPC},"id":1,"method":"ping`, `","params":{}}`],
  id: [`{"jsonrpc":${JSONRPC},"id":"`, `","method":"ping","params":{}}`],
  param: [`{"jsonrpc":${JSONRPC},"id":1,"method":"ping","params":{"text":"`, `"}}`],
} as const;
type Slot = keyof typeof SLOTS;

const placed = (fault: Utf8Fault, bad: number[], slot: Slot | "raw"): MalformedUtf8Line =>
  slot === "raw"
    ? line(fault, "raw", Buffer.from(bad))
    : line(
        fault,
        "in-string",
        Buffer.concat([Buffer.from(SLOTS[slot][0]), Buffer.from(bad), Buffer.from(SLOTS[slot][1])]),
      );

/** Lines (without LF) holding malformed UTF-8, raw or inside the strings of a valid request. */
export function malformedUtf8(constraints: MalformedUtf8Constraints = {}): fc.Arbitrary<MalformedUtf8Line> {
  const { faults = [...UTF8_FAULTS], placements = ["raw", "in-string"] } = constraints;
  return fc
    .tuple(
      fc.constantFrom(...faults).chain((fault) => faultBytes[fault].map((bad) => ({ fault, bad }))),
      fc.constantFrom(...placements),
      fc.constantFrom(...(Object.keys(SLOTS) as Slot[])),
    )
    .map(([{ fault, bad }, placement, slot]) => placed(fault, bad, placement === "raw" ? "raw" : slot));
}

/**
 * Every fault raw and inside every string a request has (a bridge may check UTF-8 only where it reads a string):
 * the classes a check tries first. Each fault's bytes are one drawn line of its byte ranges, the same every run.
 */
export function malformedUtf8Classes(): MalformedUtf8Line[] {
  return UTF8_FAULTS.flatMap((fault) => {
    const bad = fc.sample(faultBytes[fault], { numRuns: 1, seed: 1 })[0]!;
    return (["raw", ...Object.keys(SLOTS)] as (Slot | "raw")[]).map((slot) => placed(fault, bad, slot));
  });
}
