import fc from "fast-check";

export interface BadEnvelopeConstraints {
  /** Include faults the contract forbids but lenient bridges accept (missing params, missing id). Default: true. */
  leniencies?: boolean;
}

export interface BadEnvelope {
  /** What is wrong, in words. */
  fault: string;
  /** A fault that a bridge may tolerate with a warning rather than fail on. */
  lenient: boolean;
  /** The JSON root sent (valid JSON, invalid envelope). */
  request: unknown;
}

const base = () => ({ jsonrpc: "2.0", id: 7, method: "ping", params: {} as unknown });
const nonObject = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 8 }), fc.array(fc.integer(), { maxLength: 3 }));

/** Valid JSON that breaks the request envelope in exactly one place. */
export function badEnvelope(constraints: BadEnvelopeConstraints = {}): fc.Arbitrary<BadEnvelope> {
  const { leniencies = true } = constraints;
  const without = (key: string) => { const r: Record<string, unknown> = base(); delete r[key]; return r; };
  const strict: fc.Arbitrary<BadEnvelope>[] = [
    fc.constant({ fault: "jsonrpc missing", lenient: false, request: without("jsonrpc") }),
    fc.constantFrom<unknown>(2, 2.0, "2", "1.0", "2.0 ", null, "", ["2.0"]).map((v) => ({ fault: `jsonrpc ${JSON.stringify(v)}`, lenient: false, request: { ...base(), jsonrpc: v } })),
    fc.constant({ fault: "method missing", lenient: false, request: without("method") }),
    fc.oneof(fc.constant(""), nonObject.filter((v) => typeof v !== "string" || v === ""), fc.constant({ name: "ping" }))
      .map((v) => ({ fault: `method ${JSON.stringify(v)}`, lenient: false, request: { ...base(), method: v } })),
    nonObject.map((v) => ({ fault: `params ${JSON.stringify(v)}`, lenient: false, request: { ...base(), params: v } })),
    nonObject.map((v) => ({ fault: `root is ${Array.isArray(v) ? "an array" : v === null ? "null" : typeof v}`, lenient: false, request: v })),
  ];
  const lenient: fc.Arbitrary<BadEnvelope>[] = [
    fc.constant({ fault: "params missing", lenient: true, request: without("params") }),
    fc.constant({ fault: "id missing", lenient: true, request: without("id") }),
  ];
  return fc.oneof(...strict, ...(leniencies ? lenient : []));
}
