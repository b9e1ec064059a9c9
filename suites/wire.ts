import fc from "fast-check";
import { validRequest } from "../generators/validRequest.js";
import { requestId } from "../generators/requestId.js";
import { malformedUtf8 } from "../generators/malformedUtf8.js";
import { oversizedBytes, oversizedLine, paddedRequest, TAIL_ID } from "../generators/oversizedLine.js";
import { badEnvelope } from "../generators/badEnvelope.js";
import { describeReply, errorCode, fail, pass, resultOf, rpc, skip, warn, type Check, type CheckContext, type Finding, type Reply } from "./check.js";

/** A ping must come back as {ok:true}; anything else fails `rule`. */
function expectPong(reply: Reply, what: string, rule: Check["rules"][number]): Finding {
  if (resultOf(reply)?.ok === true) return pass(`${what}: answered.`);
  return fail(`${what}: the ping was not answered with {"ok":true}.`, `{"result":{"ok":true}}`, describeReply(reply), [rule]);
}

/** The outcomes the contract allows for input that must be rejected with `code` or a close. */
function rejectedOrClosed(reply: Reply, code: number): boolean {
  return errorCode(reply) === code || reply.kind === "closed" || reply.kind === "reset";
}

export const splitWrites: Check = {
  id: "wire.tcp-stream/split-writes",
  rules: ["wire.tcp-stream"],
  description: "Sends a ping whose bytes are cut at random points into separate TCP writes, with pauses between them.",
  requirement: "A bridge accepts an explicitly configured TCP endpoint [and reads it as a byte stream]: a request may arrive in any number of segments.",
  run: (ctx) =>
    ctx.property(
      fc.record({
        request: validRequest({ ids: { structured: false } }),
        cuts: fc.uniqueArray(fc.integer({ min: 1, max: 80 }), { minLength: 1, maxLength: 8 }),
        delayMs: fc.integer({ min: 0, max: 15 }),
      }),
      async ({ request, cuts, delayMs }) => {
        const conn = await ctx.session();
        const reply = await ctx.call(conn, request, { splitAt: cuts, delayMs });
        return expectPong(reply, "a request split over several writes", "wire.tcp-stream");
      },
    ),
};

export const sequenceInOrder: Check = {
  id: "wire.ndjson/sequence-in-order",
  rules: ["wire.ndjson", "wire.sequential-connection"],
  description: "Sends 20 requests one after another on one connection, reading each response before the next, then waits for stray lines.",
  requirement: "Each request and response is one JSON object terminated by LF; peers process lines in connection order.",
  async run(ctx) {
    const conn = await ctx.session();
    const methods = ["ping", "status", "observe", "events", "no.such.method"];
    for (let i = 0; i < 20; i++) {
      const request = rpc(methods[i % methods.length]!, {}, `seq-${i}`);
      const reply = await ctx.call(conn, request);
      if (reply.kind !== "response") return fail(`Request ${i + 1} of 20 (${request.method}) got no response.`, "one response line per request", describeReply(reply));
    }
    const stray = await conn.read(Math.min(200, ctx.timeoutMs));
    if (stray.kind === "line") return fail("A line arrived that answers no request.", "exactly one line per request", stray.bytes.toString("utf8").slice(0, 300), ["wire.ndjson"]);
    return pass("20 sequential requests got 20 responses, in order, and nothing more.");
  },
};

export const pipelined: Check = {
  id: "wire.ndjson/pipelined",
  rules: ["wire.ndjson"],
  description: "Writes two requests in one TCP write (pipelining, which the contract does not require) and reads what comes back.",
  requirement: "Peers process lines in connection order. (Pipelining itself is not required: not answering the second line is information, not a failure.)",
  async run(ctx) {
    const conn = await ctx.session();
    await conn.write(`${JSON.stringify(rpc("ping", {}, "first"))}\n${JSON.stringify(rpc("ping", {}, "second"))}\n`);
    const ids: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      const read = await conn.read(ctx.timeoutMs);
      if (read.kind !== "line") break;
      try { ids.push((JSON.parse(read.bytes.toString("utf8")) as { id?: unknown }).id); } catch { ids.push(undefined); }
    }
    if (ids[0] === "second") return fail("The second pipelined request was answered before the first.", `ids in order: "first", "second"`, JSON.stringify(ids));
    if (ids.length < 2) return skip(`Information: the bridge answered ${ids.length} of 2 pipelined requests; pipelining is not required.`);
    return pass("Both pipelined requests were answered, in order.");
  },
};

export const blankLine: Check = {
  id: "wire.ndjson/blank-line",
  rules: ["wire.ndjson", "error.parse"],
  description: "Sends an empty line (LF alone), then a ping.",
  requirement: "Each request is one JSON object terminated by LF; an empty line is not JSON and is rejected with -32700 (ignoring it is a tolerated leniency).",
  async run(ctx) {
    const conn = await ctx.session();
    const reply = await ctx.call(conn, Buffer.from("\n"));
    if (errorCode(reply) === ctx.contract.codes["error.parse"]) return pass("The empty line was answered with -32700.");
    if (reply.kind === "closed" || reply.kind === "reset") return warn("The bridge closed the connection on an empty line.", "-32700 (id null)", describeReply(reply));
    if (reply.kind === "timeout") {
      const pong = await ctx.call(conn, rpc("ping", {}, "after-blank"));
      if (resultOf(pong)?.ok === true) return warn("The empty line was ignored (tolerated; the strict reading answers -32700).", "-32700 (id null)", "no response; the next ping was answered");
      return fail("After an empty line the bridge stopped answering on the connection.", "-32700, or the line ignored and the next request served", describeReply(pong));
    }
    return fail("An empty line was not answered with a parse error.", "-32700 (id null)", describeReply(reply));
  },
};

export const malformedInput: Check = {
  id: "wire.utf8/malformed",
  rules: ["wire.utf8", "error.parse"],
  description: "Sends lines holding malformed UTF-8 (overlong forms, encoded surrogates, truncated sequences, invalid leads, lone continuations, code points above U+10FFFF), raw and inside string values; then checks the bridge still serves.",
  requirement: "JSON lines are decoded as strict UTF-8; malformed input receives a parse error (-32700) or closes the connection.",
  run: (ctx) =>
    ctx.property(malformedUtf8(), async (line) => {
      const conn = await ctx.session();
      const reply = await ctx.call(conn, Buffer.concat([line.bytes, Buffer.from("\n")]), { anyId: true });
      if (rejectedOrClosed(reply, ctx.contract.codes["error.parse"])) return pass("rejected");
      return fail(`Malformed UTF-8 (${line.fault}, ${line.placement}) was not rejected.`, "-32700 with id null, or the connection closed", describeReply(reply));
    }, { liveness: true }),
};

export const unicodeText: Check = {
  id: "wire.utf8/unicode-text",
  rules: ["wire.utf8"],
  description: "Sends pings whose string ids hold any Unicode text (astral planes, combining marks, controls as escapes) and reads them back.",
  requirement: "JSON lines are encoded and decoded as strict UTF-8 [so localized text survives the round trip].",
  run: (ctx) =>
    ctx.property(fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }), async (id) => {
      const conn = await ctx.session();
      const reply = await ctx.call(conn, rpc("ping", {}, id));
      return expectPong(reply, "a ping with a Unicode id", "wire.utf8");
    }),
};

export const exactLimit: Check = {
  id: "wire.line-limit/exact-limit",
  rules: ["wire.line-limit"],
  description: "Sends a ping padded with JSON whitespace to exactly 1,048,576 bytes before the LF.",
  requirement: "A request JSON payload is at most 1 MiB before the LF terminator [so one of exactly 1 MiB is legal and must be served].",
  async run(ctx) {
    const conn = await ctx.session();
    const bytes = Buffer.concat([paddedRequest(ctx.contract.limits.maxLineBytes), Buffer.from("\n")]);
    const reply = await ctx.call(conn, bytes, { expectId: "padded" });
    return expectPong(reply, "a request of exactly 1 MiB", "wire.line-limit");
  },
};

export const overLimit: Check = {
  id: "wire.line-limit/over-limit",
  rules: ["wire.line-limit", "error.invalid-request"],
  description: "Sends lines 1 MiB + k bytes long (k from 1 up), padded so size is the only fault, some with a complete request after the limit; then checks the bridge still serves.",
  requirement: "A request payload is at most 1 MiB before the LF; oversized input is rejected (-32600, id null) and the connection may close. [The bytes after the limit are never run as a request.]",
  run: (ctx) =>
    ctx.property(oversizedLine(), async (line) => {
      const conn = await ctx.session();
      await conn.write(oversizedBytes(line, ctx.contract.limits.maxLineBytes));
      const first = await conn.read(ctx.timeoutMs);
      // A bridge that cut the line at the limit would answer the tail with the tail's own id.
      const second = line.tail && first.kind === "line" ? await conn.read(Math.min(300, ctx.timeoutMs)) : undefined;
      if ([first, second].some((r) => r?.kind === "line" && r.bytes.includes(TAIL_ID))) {
        return fail("The bridge ran the request that followed the limit inside an oversized line.", "the whole oversized line rejected", `a response with id "${TAIL_ID}"`);
      }
      if (first.kind === "closed" || first.kind === "reset") return pass("closed");
      // A bridge without a limit answers the padded ping with its own id: judged below as not rejecting it.
      const reply: Reply = first.kind === "line" ? { kind: "response", response: ctx.judge(first.bytes, line.tail ? null : "oversized"), raw: first.bytes } : first;
      if (errorCode(reply) === ctx.contract.codes["error.invalid-request"]) return pass("rejected");
      return fail(`A line ${line.excess} bytes over the limit was not rejected.`, "-32600 with id null, and/or the connection closed", describeReply(reply));
    }, { liveness: true }),
};

export const endlessLine: Check = {
  id: "wire.line-limit/endless-line",
  rules: ["wire.line-limit"],
  description: "Streams 8 MiB with no LF, 64 KiB at a time, then waits for the bridge's answer.",
  requirement: "A request payload is at most 1 MiB before the LF; oversized input is rejected [-32600 or close, without buffering the rest].",
  async run(ctx) {
    const conn = await ctx.session();
    const chunk = Buffer.alloc(65_536, 0x61);
    for (let sent = 0; sent < 8 * 1_048_576 && !conn.closed; sent += chunk.length) {
      if (!(await conn.write(chunk))) break;
    }
    const reply = await ctx.read(conn);
    const rejected = rejectedOrClosed(reply, ctx.contract.codes["error.invalid-request"]);
    if (!rejected && reply.kind === "timeout") {
      return fail("8 MiB without an LF drew neither -32600 nor a close: the bridge is buffering without bound or has stopped reading.", "-32600 (id null), or the connection closed", describeReply(reply));
    }
    if (!rejected) return fail("An endless line was answered with something other than -32600.", "-32600 (id null) or close", describeReply(reply));
    if (!(await ctx.alive())) return fail("After an endless line the bridge stopped answering ping on a fresh connection.", "the bridge keeps serving", "no answer to ping");
    return pass("The endless line was rejected and the bridge still serves.");
  },
};

export const badEnvelopes: Check = {
  id: "wire.request-envelope/bad-envelope",
  rules: ["wire.request-envelope", "error.invalid-request"],
  description: "Sends valid JSON that breaks the envelope in one place: jsonrpc missing or not \"2.0\", method missing, empty or not a string, params not an object, roots that are not objects; also params or id missing. Ids of every JSON type. Then checks the bridge still serves.",
  requirement: "A request object carries jsonrpc=2.0, a caller-chosen id, a non-empty method string, and an object-valued params member; others are rejected with -32600.",
  run: (ctx) =>
    ctx.property(badEnvelope(), async ({ fault, lenient, request }) => {
      const conn = await ctx.session();
      const hasId = typeof request === "object" && request !== null && !Array.isArray(request) && "id" in request;
      const r = await ctx.call(conn, JSON.stringify(request), {
        expectId: hasId ? (request as { id: unknown }).id : null,
        orNullId: true,
        timeoutMs: lenient ? Math.min(ctx.timeoutMs, 1000) : undefined,
      });
      if (errorCode(r) === ctx.contract.codes["error.invalid-request"]) return pass("rejected");
      if (lenient && (r.kind === "response" || r.kind === "timeout")) {
        return warn(`A request with ${fault} was ${r.kind === "timeout" ? "not answered" : "accepted"} (tolerated; the strict reading rejects it with -32600).`, "-32600", describeReply(r));
      }
      return fail(`A request with ${fault} was not rejected as invalid.`, "-32600", describeReply(r));
    }, { liveness: true }),
};

export const echoId: Check = {
  id: "wire.response-envelope/echo-id",
  rules: ["wire.response-envelope"],
  description: "Sends ping, status, observe, events and an unknown method with ids of every JSON type (strings, large and negative numbers, booleans, null, arrays, objects).",
  requirement: "A response echoes jsonrpc=2.0 and the request id, then contains exactly one of result or error; error contains an integer code and string message.",
  run: (ctx) =>
    ctx.property(
      fc.record({ id: requestId(), method: fc.constantFrom("ping", "status", "observe", "events", "no.such.method") }),
      async ({ id, method }) => {
        const conn = await ctx.session();
        const reply = await ctx.call(conn, rpc(method, {}, id));
        if (reply.kind === "response") return pass("echoed");
        return fail(`No response to ${method}.`, "a response echoing the id", describeReply(reply));
      },
    ),
};

export const reconnects: Check = {
  id: "wire.sequential-connection/reconnect",
  rules: ["wire.sequential-connection", "wire.tcp-stream"],
  description: "Opens five connections one after another (never two at once), each sending one ping and closing.",
  requirement: "A client sends a request and consumes its matching response before reusing that connection; clients must not require multiplexing or concurrent in-flight requests [and a bridge serves the next connection once one ends].",
  async run(ctx) {
    for (let i = 1; i <= 5; i++) {
      const conn = await ctx.session();
      const reply = await ctx.call(conn, rpc("ping", {}, i));
      conn.close();
      if (resultOf(reply)?.ok !== true) return fail(`Connection ${i} of 5 was not served.`, `{"result":{"ok":true}}`, describeReply(reply));
    }
    return pass("Five consecutive connections were each served.");
  },
};

export const wireChecks: Check[] = [splitWrites, sequenceInOrder, pipelined, blankLine, malformedInput, unicodeText, exactLimit, overLimit, endlessLine, badEnvelopes, echoId, reconnects];
