import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  differentId,
  lookalikes,
  malformedReply,
  malformedReplyExamples,
  type ReplyFlaw,
} from "../generators/malformedReply.js";
import { encode, validReply } from "../generators/validReply.js";
import { contract } from "../protocol/contract.js";

// The generators of client mode, held to their promises: every malformed reply is one a strict
// client must reject, whatever id it answers; every valid reply is one it must take.

const RUNS = { numRuns: 300 };
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b) && jsonType(a) === jsonType(b);
const ids = fc.oneof(fc.integer(), fc.string({ maxLength: 6 }), fc.boolean(), fc.constant(null), fc.constant(1));

/** An independent strict judge: why a reply line is not one valid response to `id`, or undefined. */
function flawOf(text: string, id: unknown): string | undefined {
  let reply: unknown;
  try {
    reply = JSON.parse(text);
  } catch {
    return "non-json";
  }
  if (!isObject(reply)) return "non-object";
  if (reply.jsonrpc !== contract.jsonrpc) return "jsonrpc";
  if (!("id" in reply) || !sameJson(reply.id, id)) return "id";
  if ("result" in reply === "error" in reply) return "result-and-error";
  if ("error" in reply) {
    const e = reply.error;
    if (!isObject(e) || !Number.isInteger(e.code) || typeof e.code !== "number" || typeof e.message !== "string")
      return "error-shape";
  }
  return undefined;
}

describe("malformedReply", () => {
  it("is malformed for any request id, in the way its flaw names", () => {
    fc.assert(
      fc.property(malformedReply(), ids, (reply, id) => {
        const text = reply.render(id);
        expect(text).not.toContain("\n");
        expect(flawOf(text, id), `${reply.detail}: ${text}`).toBe(reply.flaw);
      }),
      RUNS,
    );
  });

  it("draws only the flaws asked for", () => {
    const flaws: ReplyFlaw[] = ["id", "error-shape"];
    fc.assert(
      fc.property(malformedReply({ flaws }), (reply) => {
        expect(flaws).toContain(reply.flaw);
      }),
      RUNS,
    );
  });

  it("gives every flaw an example, each malformed as it says", () => {
    const examples = malformedReplyExamples();
    expect(new Set(examples.map((e) => e.flaw))).toEqual(
      new Set(["non-json", "non-object", "jsonrpc", "id", "result-and-error", "error-shape"]),
    );
    for (const e of examples) for (const id of [1, "1", true, null, "a"]) expect(flawOf(e.render(id), id)).toBe(e.flaw);
  });

  it("lookalikes differ in JSON type, differentId in value", () => {
    fc.assert(
      fc.property(ids, fc.integer({ min: -5, max: 5 }), (id, delta) => {
        for (const alike of lookalikes(id)) expect(jsonType(alike)).not.toBe(jsonType(id));
        expect(sameJson(differentId(id, delta), id)).toBe(false);
      }),
      RUNS,
    );
    expect(lookalikes(1)).toEqual(expect.arrayContaining(["1", true]));
  });
});

describe("validReply", () => {
  it("echoes the id and carries exactly one of result and error, of the kind it says", () => {
    fc.assert(
      fc.property(validReply(), ids, fc.constantFrom(...contract.methods, "custom"), (reply, id, method) => {
        const text = reply.render({ id, method });
        expect(text).not.toContain("\n");
        expect(flawOf(text, id), text).toBeUndefined();
        expect(reply.kind in (JSON.parse(text) as object)).toBe(true);
      }),
      RUNS,
    );
  });

  it("answers ping with {ok: true} and draws only the kinds asked for", () => {
    fc.assert(
      fc.property(validReply({ kinds: ["result"] }), (reply) => {
        expect(reply.kind).toBe("result");
        expect((JSON.parse(reply.render({ id: 1, method: "ping" })) as { result: unknown }).result).toEqual({
          ok: true,
        });
      }),
      RUNS,
    );
  });

  it("writes the plain encoding without encodings", () => {
    fc.assert(
      fc.property(validReply({ encodings: false }), (reply) => {
        expect(reply.encoding).toEqual({ space: "", order: "as-built", escape: "none" });
      }),
      RUNS,
    );
  });

  it("writes every reply in the one encoding asked for", () => {
    const encoding = { space: "\t", order: "reversed", escape: "all" } as const;
    fc.assert(
      fc.property(validReply({ encoding }), (reply) => {
        expect(reply.encoding).toEqual(encoding);
        const text = reply.render({ id: 1, method: "ping" });
        expect(text.startsWith("{\t")).toBe(true);
        expect(text).not.toContain('"jsonrpc"');
      }),
      RUNS,
    );
  });

  it("encode reads back as the same value in every encoding", () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.constantFrom("", " ", "\t", " \t ") as fc.Arbitrary<"" | " " | "\t" | " \t ">,
        fc.constantFrom("as-built", "reversed") as fc.Arbitrary<"as-built" | "reversed">,
        fc.constantFrom("none", "all", "solidus") as fc.Arbitrary<"none" | "all" | "solidus">,
        (value, space, order, escaping) => {
          const text = encode(value, { space, order, escape: escaping });
          expect(text).not.toContain("\n");
          expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        },
      ),
      RUNS,
    );
  });
});
