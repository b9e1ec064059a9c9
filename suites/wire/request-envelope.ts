import { badEnvelope, badEnvelopeExamples } from "../../generators/badEnvelope.js";
import { contract as shipped } from "../../protocol/contract.js";
import { type Check, describeReply, errorCode, fail, pass, warn } from "../harness/check.js";
import { classesFirst } from "../harness/classes.js";
import { judgedBy } from "../harness/expect.js";

/** Every envelope defect once, the leniencies last: a bridge that skips one check of its envelope is found. */
const CLASSES = badEnvelopeExamples();

export const badEnvelopes: Check = {
  id: "wire.request-envelope/bad-envelope",
  rules: ["wire.request-envelope", "error.invalid-request"],
  description: `Sends valid JSON that breaks the envelope in one place: jsonrpc missing or not "${shipped.jsonrpc}", method missing, empty or not a string, params not an object, roots that are not objects; also params or id missing. Ids of every JSON type. Then checks the bridge still serves.`,
  note: "a request that breaks the envelope is an invalid request",
  run: (ctx) =>
    ctx.property(
      badEnvelope(),
      async ({ fault, lenient, request }) => {
        const conn = await ctx.session();
        const hasId = typeof request === "object" && request !== null && !Array.isArray(request) && "id" in request;
        const r = await ctx.call(conn, JSON.stringify(request), {
          expectId: hasId ? (request as { id: unknown }).id : null,
          orNullId: true,
          timeoutMs: lenient ? Math.min(ctx.timeoutMs, 1000) : undefined,
        });
        const invalid = ctx.contract.codes["error.invalid-request"];
        if (errorCode(r) === invalid) return pass("rejected");
        if (lenient && (r.kind === "response" || r.kind === "timeout")) {
          return warn(
            `A request with ${fault} was ${r.kind === "timeout" ? "not answered" : "accepted"} (tolerated; the strict reading rejects it with ${invalid}).`,
            String(invalid),
            describeReply(r),
          );
        }
        // Where the reading is lenient, an acceptance is a warning: only what else came fails.
        const rejected = { path: ["error", "code"], equals: invalid };
        return judgedBy(
          lenient
            ? { kind: "reply", expect: [{ anyOf: [[rejected], [{ path: ["result"], is: "present" }]] }] }
            : { kind: "error", codes: [invalid!] },
          fail(`A request with ${fault} was not rejected as invalid.`, String(invalid), describeReply(r)),
        );
      },
      { ...classesFirst(CLASSES, ctx.runs - CLASSES.length), liveness: true },
    ),
};

export const checks: Check[] = [badEnvelopes];
