import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { badEnvelope, badEnvelopeExamples } from "../generators/badEnvelope.js";
import { COMMAND_FIELDS, command, type FieldKind, ILL_TYPED, isWellTyped } from "../generators/command.js";
import { malformedUtf8, type Utf8Fault } from "../generators/malformedUtf8.js";
import { type NonStandardKind, nonStandardJson } from "../generators/nonStandardJson.js";
import { oversizedBytes, oversizedLine, paddedRequest, TAIL_ID } from "../generators/oversizedLine.js";
import { requestId } from "../generators/requestId.js";
import { unauthorizedCall } from "../generators/unauthorizedCall.js";
import { unknownMethod } from "../generators/unknownMethod.js";
import { validRequest } from "../generators/validRequest.js";

// Each generator documents what it promises (in its doc comments and constraints object);
// these tests hold it to that. Tests marked `it.fails` pin a promise the generator breaks
// today: when the generator is fixed they start failing, and should become plain `it`.

const RUNS = { numRuns: 200 };
/** Deterministic runs for the known-bug tests, so they never flake either way. */
const PINNED = { numRuns: 200, seed: 42 };
const METHODS = ["auth", "ping", "status", "observe", "events", "act"];
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const lenientUtf8 = new TextDecoder("utf-8");
/** TextDecoder drops a leading BOM unless told to keep it. */
const strictKeepBom = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
const roundTrip = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
const decodes = (bytes: Uint8Array) => {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
};
const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};
const graphemes = (s: string) => [...new Intl.Segmenter().segment(s)].length;
const depth = (v: unknown): number =>
  Array.isArray(v) || isObject(v) ? 1 + Math.max(0, ...Object.values(v).map(depth)) : 0;
/** Every place a request breaks the envelope: jsonrpc "2.0", id present, non-empty string method, object params. */
const envelopeFaults = (r: unknown): string[] => {
  if (!isObject(r)) return ["root"];
  const faults: string[] = [];
  if (r.jsonrpc !== "2.0") faults.push("jsonrpc");
  if (!("id" in r)) faults.push("id");
  if (typeof r.method !== "string" || r.method === "") faults.push("method");
  if (!isObject(r.params)) faults.push("params");
  return faults;
};
/** Every value the arbitrary yields in `n` samples, mapped through `f`, as a set. */
const seen = <T, U>(arb: fc.Arbitrary<T>, f: (v: T) => U, n = 1000) =>
  new Set(fc.sample(arb, { numRuns: n, seed: 7 }).map(f));

describe("requestId", () => {
  it("every id survives JSON.stringify/JSON.parse deep-equal, so a bridge can echo it", () => {
    fc.assert(
      fc.property(requestId(), (id) => {
        expect(JSON.stringify(id)).toBeTypeOf("string");
        expect(roundTrip(id)).toStrictEqual(id);
        expect(JSON.stringify(roundTrip(id))).toBe(JSON.stringify(id));
      }),
      RUNS,
    );
  });

  it("numbers are finite and never -0 (JSON cannot carry either)", () => {
    fc.assert(
      fc.property(requestId({ structured: false }), (id) => {
        if (typeof id === "number") expect(Number.isFinite(id) && !Object.is(id, -0)).toBe(true);
      }),
      RUNS,
    );
  });

  it("draws ids of every JSON type by default", () => {
    expect(seen(requestId(), jsonType)).toEqual(new Set(["string", "number", "boolean", "null", "array", "object"]));
  });

  it("structured: false never yields an array or object", () => {
    fc.assert(
      fc.property(requestId({ structured: false }), (id) => {
        expect(["string", "number", "boolean", "null"]).toContain(jsonType(id));
      }),
      RUNS,
    );
  });

  it("nullable: false with structured: false never yields null", () => {
    const ids = requestId({ structured: false, nullable: false });
    fc.assert(
      fc.property(ids, (id) => {
        expect(id).not.toBeNull();
      }),
      RUNS,
    );
  });

  // BUG: the structured branch is fc.jsonValue(), which yields a top-level null regardless of `nullable`.
  it("nullable: false never yields null, structured ids included", () => {
    fc.assert(
      fc.property(requestId({ nullable: false }), (id) => {
        expect(id).not.toBeNull();
      }),
      PINNED,
    );
  });

  it("structured ids nest no deeper than maxDepth", () => {
    for (const maxDepth of [0, 1, 2, 3]) {
      fc.assert(
        fc.property(requestId({ maxDepth }), (id) => {
          expect(depth(id)).toBeLessThanOrEqual(maxDepth);
        }),
        RUNS,
      );
    }
  });
});

describe("validRequest", () => {
  it("is always a valid envelope calling ping by default", () => {
    fc.assert(
      fc.property(validRequest(), (r) => {
        expect(envelopeFaults(r)).toEqual([]);
        expect(r.method).toBe("ping");
        expect(r.params).toEqual({});
      }),
      RUNS,
    );
  });

  it("stays a valid envelope, with the same id, after a JSON round trip", () => {
    fc.assert(
      fc.property(validRequest(), (r) => {
        // fc.record may build null-prototype objects, so compare values, not prototypes, at the top.
        const sent = roundTrip(r) as Record<string, unknown>;
        expect(envelopeFaults(sent)).toEqual([]);
        expect(sent).toEqual({ ...r });
        expect(sent.id).toStrictEqual(r.id);
      }),
      RUNS,
    );
  });

  it("calls only, and every one of, the requested methods", () => {
    const methods = ["status", "observe", "events"];
    fc.assert(
      fc.property(validRequest({ methods }), (r) => {
        expect(envelopeFaults(r)).toEqual([]);
        expect(methods).toContain(r.method);
      }),
      RUNS,
    );
    expect(seen(validRequest({ methods }), (r) => r.method)).toEqual(new Set(methods));
  });

  it("passes the id constraints on to requestId", () => {
    fc.assert(
      fc.property(validRequest({ ids: { structured: false, nullable: false } }), (r) => {
        expect(["string", "number", "boolean"]).toContain(jsonType(r.id));
      }),
      RUNS,
    );
  });
});

describe("badEnvelope", () => {
  it("its examples hold every defect once, each breaking the envelope in one place, the leniencies last", () => {
    const examples = badEnvelopeExamples();
    expect(new Set(examples.map((e) => e.fault)).size).toBe(examples.length);
    for (const { request } of examples) {
      expect(JSON.parse(JSON.stringify(request))).toStrictEqual(request);
      expect(envelopeFaults(request)).toHaveLength(1);
    }
    const where = new Set(examples.map((e) => envelopeFaults(e.request)[0]));
    expect(where).toEqual(new Set(["root", "params", "method", "jsonrpc", "id"]));
    expect(examples.filter((e) => e.lenient).map((e) => e.fault)).toEqual(["params missing", "id missing"]);
    expect(examples.slice(-2).every((e) => e.lenient)).toBe(true);
  });

  it("the request is valid JSON: it round-trips through JSON.stringify/parse unchanged", () => {
    fc.assert(
      fc.property(badEnvelope(), ({ request }) => {
        const text = JSON.stringify(request);
        expect(text).toBeTypeOf("string");
        expect(JSON.parse(text)).toStrictEqual(request);
      }),
      RUNS,
    );
  });

  it("breaks the envelope in exactly one place", () => {
    fc.assert(
      fc.property(badEnvelope(), ({ request }) => {
        expect(envelopeFaults(request)).toHaveLength(1);
      }),
      RUNS,
    );
  });

  it("names its fault, and flags as lenient exactly a missing id or missing params", () => {
    fc.assert(
      fc.property(badEnvelope(), ({ fault, lenient, request }) => {
        expect(fault).not.toBe("");
        const missing = isObject(request) && (!("id" in request) || !("params" in request));
        expect(lenient).toBe(missing);
      }),
      RUNS,
    );
  });

  it("draws both strict and lenient faults by default", () => {
    expect(seen(badEnvelope(), (v) => v.lenient)).toEqual(new Set([true, false]));
    expect(seen(badEnvelope(), (v) => envelopeFaults(v.request)[0])).toEqual(
      new Set(["root", "jsonrpc", "id", "method", "params"]),
    );
  });

  it("with leniencies: false no lenient case appears", () => {
    fc.assert(
      fc.property(badEnvelope({ leniencies: false }), ({ lenient, request }) => {
        expect(lenient).toBe(false);
        if (isObject(request)) {
          expect(request).toHaveProperty("id");
          expect(request).toHaveProperty("params");
        }
      }),
      RUNS,
    );
  });

  it("carries ids of every scalar JSON type, so error replies show how they echo them", () => {
    const ids = seen(badEnvelope(), ({ request: r }) => (isObject(r) && "id" in r ? jsonType(r.id) : "none"));
    expect(ids).toEqual(new Set(["string", "number", "boolean", "null", "none"]));
  });
});

describe("malformedUtf8", () => {
  const FAULTS: Utf8Fault[] = ["overlong", "surrogate", "truncated", "invalid-lead", "lone-continuation", "above-max"];
  /** What the raw bytes of each fault look like, as hex. */
  const SHAPES: Record<Utf8Fault, RegExp> = {
    overlong: /^(c[01][89ab].|e0[89].[89ab].|f0[8][0-9a-f]([89ab].){2})$/,
    surrogate: /^ed[ab].[89ab].$/,
    truncated: /^(c[2-9a-f]|d.|e[1-9a-c][89ab].|f[1-3]([89ab].){2})41$/,
    "invalid-lead": /^(c[01]|f[5-9a-f])$/,
    "lone-continuation": /^([89ab].){1,3}$/,
    "above-max": /^(f4[9ab].|f[5-7][89ab].)([89ab].){2}$/,
  };

  it("the bytes never decode as strict UTF-8, and hold no LF", () => {
    fc.assert(
      fc.property(malformedUtf8(), ({ bytes }) => {
        expect(decodes(bytes)).toBe(false);
        expect(bytes.includes(0x0a)).toBe(false);
      }),
      RUNS,
    );
  });

  it("honours the faults constraint, and a raw line is exactly a sequence of that fault", () => {
    for (const fault of FAULTS) {
      fc.assert(
        fc.property(malformedUtf8({ faults: [fault] }), (v) => {
          expect(v.fault).toBe(fault);
          expect(decodes(v.bytes)).toBe(false);
          if (v.placement === "raw") expect(v.bytes.toString("hex")).toMatch(SHAPES[fault]);
        }),
        { numRuns: 60 },
      );
    }
  });

  it("honours the placements constraint", () => {
    for (const placement of ["raw", "in-string"] as const) {
      fc.assert(
        fc.property(malformedUtf8({ placements: [placement] }), (v) => {
          expect(v.placement).toBe(placement);
        }),
        RUNS,
      );
    }
  });

  it("draws every fault and both placements by default", () => {
    expect(seen(malformedUtf8(), (v) => v.fault)).toEqual(new Set(FAULTS));
    expect(seen(malformedUtf8(), (v) => v.placement)).toEqual(new Set(["raw", "in-string"]));
  });

  it("in-string lines are otherwise a valid request, the bad bytes inside one of its strings", () => {
    fc.assert(
      fc.property(malformedUtf8({ placements: ["in-string"] }), ({ bytes }) => {
        // Decoding with replacement characters leaves only the bad bytes changed.
        const request = JSON.parse(lenientUtf8.decode(bytes)) as unknown;
        expect(envelopeFaults(request)).toEqual([]);
        const r = request as Record<string, unknown>;
        const slots = [r.method, r.id, (r.params as Record<string, unknown>).text];
        const strings = slots.filter((s) => typeof s === "string");
        expect(strings.some((s) => s.includes("\ufffd"))).toBe(true);
      }),
      RUNS,
    );
  });

  it("shows counterexamples with the bad bytes escaped", () => {
    const [v] = fc.sample(malformedUtf8({ faults: ["surrogate"], placements: ["raw"] }), 1);
    expect(fc.stringify(v)).toMatch(/^surrogate, raw: \\xED\\x[AB][0-9A-F]\\x[89AB][0-9A-F]$/);
  });
});

describe("nonStandardJson", () => {
  const KINDS: NonStandardKind[] = [
    "nan-infinity",
    "comment",
    "trailing-comma",
    "single-quotes",
    "bad-number",
    "control-char",
    "bad-escape",
    "bom",
    "truncated",
    "trailing-garbage",
    "unquoted-key",
    "bad-literal",
  ];

  it("the text is a single line of valid UTF-8", () => {
    fc.assert(
      fc.property(nonStandardJson(), ({ text }) => {
        expect(strictKeepBom.decode(Buffer.from(text, "utf8"))).toBe(text);
        expect(text).not.toContain("\n");
      }),
      RUNS,
    );
  });

  it("JSON.parse rejects the text", () => {
    fc.assert(
      fc.property(nonStandardJson(), ({ text }) => {
        expect(parses(text)).toBe(false);
      }),
      RUNS,
    );
  });

  it("honours the kinds constraint", () => {
    for (const kind of KINDS) {
      fc.assert(
        fc.property(nonStandardJson({ kinds: [kind] }), (v) => {
          expect(v.kind).toBe(kind);
          expect(parses(v.text)).toBe(false);
        }),
        { numRuns: 30 },
      );
    }
  });

  it("draws every kind by default", () => {
    expect(seen(nonStandardJson(), (v) => v.kind)).toEqual(new Set(KINDS));
  });

  // JSON.parse does not skip a BOM (it is not JSON whitespace), and RFC 8259 forbids sending one: the
  // promise is a valid request preceded by the bytes EF BB BF, the BOM being the only fault.
  it("bom is a valid request preceded by EF BB BF, which JSON.parse rejects", () => {
    fc.assert(
      fc.property(nonStandardJson({ kinds: ["bom"] }), ({ text }) => {
        expect([...Buffer.from(text, "utf8").subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
        expect(envelopeFaults(JSON.parse(text.slice(1)))).toEqual([]);
        expect(() => JSON.parse(text)).toThrow(SyntaxError);
      }),
      { numRuns: 5 },
    );
  });
});

describe("oversizedLine", () => {
  it("excess is between 1 and 65,536 bytes by default, and both tail options appear", () => {
    fc.assert(
      fc.property(oversizedLine(), ({ excess, tail }) => {
        expect(Number.isInteger(excess)).toBe(true);
        expect(excess).toBeGreaterThanOrEqual(1);
        expect(excess).toBeLessThanOrEqual(65_536);
        expect(tail).toBeTypeOf("boolean");
      }),
      RUNS,
    );
    expect(seen(oversizedLine(), (v) => v.tail)).toEqual(new Set([true, false]));
    expect(seen(oversizedLine(), (v) => v.excess === 1)).toContain(true);
  });

  it("honours maxExcess at or above 64", () => {
    fc.assert(
      fc.property(oversizedLine({ maxExcess: 1000 }), ({ excess }) => {
        expect(excess).toBeGreaterThanOrEqual(1);
        expect(excess).toBeLessThanOrEqual(1000);
      }),
      RUNS,
    );
  });

  // BUG: the middle branch is fc.integer({ min: 1, max: 64 }), which ignores a maxExcess below 64.
  it.fails("honours a maxExcess below 64", () => {
    fc.assert(
      fc.property(oversizedLine({ maxExcess: 8 }), ({ excess }) => {
        expect(excess).toBeLessThanOrEqual(8);
      }),
      PINNED,
    );
  });

  it("tails: false never asks for a tail", () => {
    fc.assert(
      fc.property(oversizedLine({ tails: false }), ({ tail }) => {
        expect(tail).toBe(false);
      }),
      RUNS,
    );
  });
});

describe("oversizedBytes", () => {
  const TAIL = `{"jsonrpc":"2.0","id":"${TAIL_ID}","method":"ping","params":{}}`;

  /** The promise for one line and limit: payload size, one LF at the end, and what the payload holds. */
  function checkLine(line: { excess: number; tail: boolean }, limit: number) {
    const bytes = oversizedBytes(line, limit);
    expect(bytes.indexOf(0x0a)).toBe(bytes.length - 1);
    const payload = bytes.subarray(0, -1);
    expect(payload.length).toBeGreaterThan(limit);
    if (!line.tail) {
      // Exactly `excess` past the limit, and padding is JSON whitespace: size is the only fault.
      expect(payload.length).toBe(limit + line.excess);
      const request = { jsonrpc: "2.0", id: "oversized", method: "ping", params: {} };
      expect(JSON.parse(payload.toString("utf8"))).toEqual(request);
    } else {
      // At least the tail's length past the limit; exactly `excess` when that is longer.
      expect(payload.length).toBe(limit + Math.max(line.excess, TAIL.length));
      expect(payload.subarray(-TAIL.length).toString("utf8")).toBe(TAIL);
      expect(parses(payload.subarray(0, limit).toString("utf8"))).toBe(false);
    }
  }

  it("at the 1 MiB default, the payload is over the limit by the documented excess, with one LF at the end", () => {
    fc.assert(
      fc.property(oversizedLine(), (line) => checkLine(line, 1_048_576)),
      { numRuns: 40 },
    );
  });

  it("the boundary line is exactly 1 MiB + 1 byte before the LF", () => {
    expect(oversizedBytes({ excess: 1, tail: false }).length).toBe(1_048_576 + 2);
  });

  it("keeps its promise for a small custom maxLineBytes", () => {
    for (const limit of [100, 256, 1000]) {
      fc.assert(
        fc.property(oversizedLine({ maxExcess: 300 }), (line) => checkLine(line, limit)),
        RUNS,
      );
    }
  });

  it("a tail starts at or after the limit and is a complete request", () => {
    const limits = fc.integer({ min: 100, max: 2000 });
    fc.assert(
      fc.property(oversizedLine({ maxExcess: 300 }), limits, ({ excess }, limit) => {
        const payload = oversizedBytes({ excess, tail: true }, limit).subarray(0, -1);
        const start = payload.length - TAIL.length;
        expect(start).toBeGreaterThanOrEqual(limit);
        expect(JSON.parse(payload.subarray(start).toString("utf8"))).toMatchObject({ id: TAIL_ID, method: "ping" });
      }),
      RUNS,
    );
  });

  // BUG (minor): without a tail the line is paddedRequest(limit + excess), which throws RangeError when that is
  // below ~58 bytes; oversizedBytes documents no minimum limit.
  it.fails("builds a line for a tiny limit too", () => {
    expect(oversizedBytes({ excess: 1, tail: false }, 16).length).toBe(18);
  });
});

describe("paddedRequest", () => {
  /** Bytes of the request before its closing brace. */
  const headBytes = (id: unknown) =>
    Buffer.byteLength(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"ping","params":{}`);

  it("is exactly n bytes and valid JSON with the given id, for ids of every JSON type", () => {
    fc.assert(
      fc.property(requestId(), fc.nat(200), (id, extra) => {
        const n = headBytes(id) + 1 + extra;
        const out = paddedRequest(n, id);
        expect(out.length).toBe(n);
        expect(JSON.parse(out.toString("utf8"))).toStrictEqual({ jsonrpc: "2.0", id, method: "ping", params: {} });
      }),
      RUNS,
    );
  });

  it('uses the id "padded" by default, and can fill exactly 1 MiB', () => {
    const out = paddedRequest(1_048_576);
    expect(out.length).toBe(1_048_576);
    expect(JSON.parse(out.toString("utf8"))).toMatchObject({ id: "padded" });
  });

  it("throws RangeError for a payload too small to hold the request (ASCII ids)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "grapheme-ascii", maxLength: 20 }), fc.integer()), (id) => {
        const min = headBytes(id) + 1;
        expect(paddedRequest(min, id).length).toBe(min);
        expect(() => paddedRequest(min - 1, id)).toThrow(RangeError);
        expect(() => paddedRequest(0, id)).toThrow(RangeError);
      }),
      RUNS,
    );
  });

  // BUG: the size check counts UTF-16 code units (head.length), not bytes; with a non-ASCII id a payload
  // below the request's byte length is not refused, and the request is cut short and overwritten by "}".
  it.fails("throws RangeError for a payload too small to hold the request (non-ASCII ids)", () => {
    const id = "ééé";
    expect(() => paddedRequest(headBytes(id) - 1, id)).toThrow(RangeError);
  });
});

describe("unknownMethod", () => {
  it("is never empty and never one of the known methods", () => {
    fc.assert(
      fc.property(unknownMethod(), (m) => {
        expect(m).toBeTypeOf("string");
        expect(m).not.toBe("");
        expect(METHODS).not.toContain(m);
      }),
      RUNS,
    );
  });

  it("honours a custom known list, near misses included", () => {
    const known = ["foo", "FOO", "foos", "rpc.foo", " foo"];
    fc.assert(
      fc.property(unknownMethod({ known }), (m) => {
        expect(m).not.toBe("");
        expect(known).not.toContain(m);
      }),
      RUNS,
    );
  });

  it("is at most 64 graphemes by default", () => {
    fc.assert(
      fc.property(unknownMethod(), (m) => {
        expect(graphemes(m)).toBeLessThanOrEqual(64);
      }),
      RUNS,
    );
  });

  it("draws near misses of the known methods", () => {
    expect(seen(unknownMethod(), (m) => m)).toContain("rpc.ping");
  });

  // BUG: only the random branch gets maxLength; near misses such as "rpc.observe" (11) ignore it.
  it("honours a small maxLength", () => {
    fc.assert(
      fc.property(unknownMethod({ maxLength: 4 }), (m) => {
        expect(graphemes(m)).toBeLessThanOrEqual(4);
      }),
      PINNED,
    );
  });
});

describe("unauthorizedCall", () => {
  it('the method is never "auth"', () => {
    fc.assert(
      fc.property(unauthorizedCall(), ({ method }) => {
        expect(method).not.toBe("auth");
      }),
      RUNS,
    );
  });

  it("calls every method but auth, and some unknown ones", () => {
    expect(seen(unauthorizedCall(), (c) => c.method)).toEqual(
      new Set(["ping", "status", "observe", "events", "act", "shutdown", "admin", "Auth"]),
    );
  });

  it("honours the methods constraint", () => {
    fc.assert(
      fc.property(unauthorizedCall({ methods: ["observe"] }), ({ method }) => {
        expect(["observe", "shutdown", "admin", "Auth"]).toContain(method);
      }),
      RUNS,
    );
  });

  it("params is an object, afterReconnect a boolean, and a wrong token is sometimes tried first", () => {
    fc.assert(
      fc.property(unauthorizedCall(), (c) => {
        expect(isObject(c.params)).toBe(true);
        expect(c.afterReconnect).toBeTypeOf("boolean");
        expect(roundTrip(c.params)).toStrictEqual(c.params);
      }),
      RUNS,
    );
    expect(seen(unauthorizedCall(), (c) => c.wrongToken === undefined)).toEqual(new Set([true, false]));
  });
});

describe("command", () => {
  const kindOf = new Map(COMMAND_FIELDS.map((f) => [f.field, f.kind] as const));
  const fieldsOf = (c: Record<string, unknown>) => Object.keys(c).filter((k) => k !== "type");

  it("reads the ten optional standard fields off the contract", () => {
    expect(COMMAND_FIELDS.map((f) => f.field).sort()).toEqual([
      "append",
      "auxId",
      "intArg",
      "itemId",
      "screenX",
      "screenY",
      "stringArg",
      "targetId",
      "x",
      "y",
    ]);
    expect(kindOf.get("targetId")).toBe("identifier");
    expect(kindOf.get("x")).toBe("integer");
    expect(kindOf.get("stringArg")).toBe("string");
    expect(kindOf.get("append")).toBe("boolean");
  });

  it("type is always a non-blank string", () => {
    fc.assert(
      fc.property(command(), ({ type }) => {
        expect(type).toBeTypeOf("string");
        expect(type.trim()).not.toBe("");
      }),
      RUNS,
    );
  });

  it("without illTyped every field is a standard one and well-typed per isWellTyped", () => {
    fc.assert(
      fc.property(command(), (c) => {
        for (const field of fieldsOf(c)) {
          const kind = kindOf.get(field);
          expect(kind).toBeDefined();
          expect(isWellTyped(kind as FieldKind, c[field])).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it("commands survive a JSON round trip, ill-typed ones included", () => {
    fc.assert(
      fc.property(command({ illTyped: true }), (c) => {
        expect(roundTrip(c)).toStrictEqual(c);
      }),
      RUNS,
    );
  });

  it("illTyped draws values isWellTyped rejects, and every ILL_TYPED value is rejected", () => {
    for (const [kind, values] of Object.entries(ILL_TYPED)) {
      for (const value of values) expect(isWellTyped(kind as FieldKind, value)).toBe(false);
    }
    const typed = seen(command({ illTyped: true, minFields: 1 }), (c) =>
      fieldsOf(c).every((f) => isWellTyped(kindOf.get(f) as FieldKind, c[f])),
    );
    expect(typed).toEqual(new Set([true, false]));
  });

  it("draws from the given types, mixed with random ones", () => {
    const types = ["move", "attack"];
    fc.assert(
      fc.property(command({ types }), ({ type }) => {
        expect(type.trim()).not.toBe("");
      }),
      RUNS,
    );
    const drawn = seen(command({ types }), (c) => (types.includes(c.type) ? c.type : "random"));
    expect(drawn).toEqual(new Set(["move", "attack", "random"]));
  });

  it("honours fields", () => {
    fc.assert(
      fc.property(command({ fields: ["x", "append"], maxFields: 5 }), (c) => {
        for (const field of fieldsOf(c)) expect(["x", "append"]).toContain(field);
      }),
      RUNS,
    );
  });

  it("has 0 to 3 fields by default, and honours minFields and maxFields", () => {
    fc.assert(
      fc.property(command(), (c) => {
        expect(fieldsOf(c).length).toBeLessThanOrEqual(3);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(command({ minFields: 2, maxFields: 5 }), (c) => {
        expect(fieldsOf(c).length).toBeGreaterThanOrEqual(2);
        expect(fieldsOf(c).length).toBeLessThanOrEqual(5);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(command({ minFields: 10, maxFields: 10 }), (c) => {
        expect(new Set(fieldsOf(c))).toEqual(new Set(COMMAND_FIELDS.map((f) => f.field)));
      }),
      { numRuns: 20 },
    );
    fc.assert(
      fc.property(command({ maxFields: 0 }), (c) => {
        expect(fieldsOf(c)).toEqual([]);
      }),
      RUNS,
    );
  });
});
