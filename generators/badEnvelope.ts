import fc from "fast-check";
import { contract } from "../protocol/contract.js";
import { requestId } from "./requestId.js";

export interface BadEnvelopeConstraints {
  /** Include faults the contract forbids but lenient bridges accept (missing params, missing id). Default: true. */
  leniencies?: boolean;
}

/** The one fault, applied to a valid request with an id of any JSON type. */
type Fault = fc.Arbitrary<{ fault: string; lenient: boolean; change: (request: Record<string, unknown>) => unknown }>;

export interface BadEnvelope {
  /** What is wrong, in words. */
  fault: string;
  /** A fault that a bridge may tolerate with a warning rather than fail on. */
  lenient: boolean;
  /** The JSON root sent (valid JSON, invalid envelope). */
  request: unknown;
}

const nonObject = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.array(fc.integer(), { maxLength: 3 }),
);
const set = (key: string, value: unknown) => (r: Record<string, unknown>) => ({ ...r, [key]: value });
const drop = (key: string) => (r: Record<string, unknown>) => {
  const { [key]: _, ...rest } = r;
  return rest;
};

/**
 * One request of every envelope defect, each with an id of another JSON type: the classes tried before generated ones.
 * Ids come from `ids` in turn (default: a string, an integer, null, a fraction, a boolean).
 */
export function badEnvelopeExamples(ids: unknown[] = ["e", 7, null, 0.5, true]): BadEnvelope[] {
  type Change = (request: Record<string, unknown>) => unknown;
  const strict = (fault: string, change: Change) => ({ fault, lenient: false, change });
  const rootName = (v: unknown) => (Array.isArray(v) ? "an array" : v === null ? "null" : typeof v);
  // Cheapest first, that break the most bridges: a root or params that is no object (a handler reading members of
  // it dies), then the method, then the version; the leniencies last.
  const cases = [
    ...[null, [], "x", 0, true].map((v) => strict(`root is ${rootName(v)}`, () => v)),
    ...[null, [], "x", 0, true].map((v) => strict(`params ${JSON.stringify(v)}`, set("params", v))),
    strict("method missing", drop("method")),
    ...["", 0, null, true, [], { name: "ping" }].map((v) => strict(`method ${JSON.stringify(v)}`, set("method", v))),
    strict("jsonrpc missing", drop("jsonrpc")),
    ...[2, "2", "1.0", "2.0 ", null, "", ["2.0"]].map((v) => strict(`jsonrpc ${JSON.stringify(v)}`, set("jsonrpc", v))),
    { fault: "params missing", lenient: true, change: drop("params") },
    { fault: "id missing", lenient: true, change: drop("id") },
  ];
  return cases.map(({ fault, lenient, change }, i) => ({
    fault,
    lenient,
    request: change({ jsonrpc: contract.jsonrpc, id: ids[i % ids.length], method: "ping", params: {} }),
  }));
}

/** Valid JSON that breaks the request envelope in exactly one place; ids of every JSON type, so error replies show how they echo them. */
export function badEnvelope(constraints: BadEnvelopeConstraints = {}): fc.Arbitrary<BadEnvelope> {
  const { leniencies = true } = constraints;
  const strict: Fault[] = [
    fc.constant({ fault: "jsonrpc missing", lenient: false, change: drop("jsonrpc") }),
    fc
      .constantFrom<unknown>(2, 2.0, "2", "1.0", "2.0 ", null, "", ["2.0"])
      .map((v) => ({ fault: `jsonrpc ${JSON.stringify(v)}`, lenient: false, change: set("jsonrpc", v) })),
    fc.constant({ fault: "method missing", lenient: false, change: drop("method") }),
    fc
      .oneof(
        fc.constant(""),
        nonObject.filter((v) => typeof v !== "string" || v === ""),
        fc.constant({ name: "ping" }),
      )
      .map((v) => ({ fault: `method ${JSON.stringify(v)}`, lenient: false, change: set("method", v) })),
    nonObject.map((v) => ({ fault: `params ${JSON.stringify(v)}`, lenient: false, change: set("params", v) })),
    nonObject.map((v) => ({
      fault: `root is ${Array.isArray(v) ? "an array" : v === null ? "null" : typeof v}`,
      lenient: false,
      change: () => v,
    })),
  ];
  const lenient: Fault[] = [
    fc.constant({ fault: "params missing", lenient: true, change: drop("params") }),
    fc.constant({ fault: "id missing", lenient: true, change: drop("id") }),
  ];
  return fc
    .tuple(fc.oneof(...strict, ...(leniencies ? lenient : [])), requestId({ structured: false }))
    .map(([{ fault, lenient: isLenient, change }, id]) => ({
      fault,
      lenient: isLenient,
      request: change({ jsonrpc: contract.jsonrpc, id, method: "ping", params: {} }),
    }));
}
