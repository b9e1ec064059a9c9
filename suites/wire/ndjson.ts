import type { Oracle } from "../../protocol/verdict.js";
import { type Check, describeReply, errorCode, fail, pass, resultOf, rpc, warn } from "../harness/check.js";
import { judgedBy } from "../harness/expect.js";

export const sequenceInOrder: Check = {
  id: "wire.ndjson/sequence-in-order",
  rules: ["wire.ndjson", "wire.sequential-connection"],
  description:
    "Sends 20 requests one after another on one connection, reading each response before the next, then waits for stray lines.",
  async run(ctx) {
    const conn = await ctx.session();
    const methods = ["ping", "status", "observe", "events", "no.such.method"];
    for (let i = 0; i < 20; i++) {
      const request = rpc(methods[i % methods.length]!, {}, `seq-${i}`);
      const reply = await ctx.call(conn, request);
      if (reply.kind !== "response")
        return judgedBy(
          { kind: "answered" },
          fail(
            `Request ${i + 1} of 20 (${request.method}) got no response.`,
            "one response line per request",
            describeReply(reply),
          ),
        );
    }
    const stray = await conn.read(Math.min(200, ctx.timeoutMs));
    if (stray.kind === "line")
      return judgedBy(
        { kind: "order", ids: ["seq-19"], nothingMore: true },
        fail(
          "A line arrived that answers no request.",
          "exactly one line per request",
          stray.bytes.toString("utf8").slice(0, 300),
          ["wire.ndjson"],
        ),
      );
    return pass("20 sequential requests got 20 responses, in order, and nothing more.");
  },
};

export const pipelined: Check = {
  id: "wire.ndjson/pipelined",
  rules: ["wire.ndjson"],
  description:
    "Writes four complete requests (ping, an unknown method, status, ping) in one TCP write and reads four replies.",
  note: "lines are processed in connection order, so every complete line the bridge received is answered, in order; it may take them one at a time (wire.sequential-connection spares it concurrency, not lines)",
  async run(ctx) {
    const conn = await ctx.session();
    const requests = [
      rpc("ping", {}, "first"),
      rpc("no.such.method", {}, "second"),
      rpc("status", {}, "third"),
      rpc("ping", {}, "fourth"),
    ];
    await conn.write(requests.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const ids: unknown[] = [];
    const inOrder: Oracle = { kind: "order", ids: requests.map((r) => r.id) };
    for (const request of requests) {
      const reply = await ctx.read(conn, { anyId: true });
      if (reply.kind !== "response")
        return judgedBy(
          inOrder,
          fail(
            `Of ${requests.length} requests written together, ${ids.length} got a reply: "${request.id}" was dropped.`,
            "one response per line, in the order of the lines",
            `ids ${JSON.stringify(ids)}, then ${describeReply(reply)}`,
          ),
        );
      ids.push(reply.response.id);
      if (reply.response.id !== request.id)
        return judgedBy(
          inOrder,
          fail(
            "The requests written together were not answered in the order of their lines.",
            `ids in order: ${requests.map((r) => JSON.stringify(r.id)).join(", ")}`,
            `ids ${JSON.stringify(ids)}`,
          ),
        );
    }
    return pass("All four requests written together were answered, in order.");
  },
};

export const unterminatedAtEof: Check = {
  id: "wire.ndjson/unterminated-at-eof",
  rules: ["wire.ndjson"],
  description: "Sends a complete ping without its LF, then half-closes the connection (FIN) and reads.",
  note: "only an LF ends a request: bytes cut off by the end of the stream are not run; no reply, an error or a close are all fine",
  async run(ctx) {
    const conn = await ctx.session();
    await conn.write(JSON.stringify(rpc("ping", {}, "unterminated")));
    conn.endWrites();
    const reply = await ctx.read(conn, { expectId: "unterminated", orNullId: true });
    if (reply.kind === "response" && !reply.response.error)
      return judgedBy(
        { kind: "error", codes: [], orClose: true, orSilence: true },
        fail(
          "A request without its LF was run when the connection's write side ended.",
          "no reply, an error, or a close",
          describeReply(reply),
        ),
      );
    return pass(`The unterminated request was not run (${reply.kind === "response" ? "an error" : reply.kind}).`);
  },
};

export const blankLine: Check = {
  id: "wire.ndjson/blank-line",
  rules: ["wire.ndjson", "error.parse"],
  description: "Sends an empty line (LF alone), then a ping.",
  note: "an empty line is not JSON, so it is a parse error; ignoring it is a tolerated leniency",
  async run(ctx) {
    const conn = await ctx.session();
    const reply = await ctx.call(conn, Buffer.from("\n"));
    const parse = ctx.contract.codes["error.parse"];
    if (errorCode(reply) === parse) return pass(`The empty line was answered with ${parse}.`);
    if (reply.kind === "closed" || reply.kind === "reset")
      return warn("The bridge closed the connection on an empty line.", `${parse} (id null)`, describeReply(reply));
    if (reply.kind === "timeout") {
      const pong = await ctx.call(conn, rpc("ping", {}, "after-blank"));
      if (resultOf(pong)?.ok === true)
        return warn(
          `The empty line was ignored (tolerated; the strict reading answers ${parse}).`,
          `${parse} (id null)`,
          "no response; the next ping was answered",
        );
      return judgedBy(
        { kind: "result", equals: { ok: true } },
        fail(
          "After an empty line the bridge stopped answering on the connection.",
          `${parse}, or the line ignored and the next request served`,
          describeReply(pong),
        ),
      );
    }
    // Closing or staying silent is a warning, not this failure: the reply that came is judged.
    return judgedBy(
      { kind: "error", codes: [parse!], orClose: true, orSilence: true },
      fail("An empty line was not answered with a parse error.", `${parse} (id null)`, describeReply(reply)),
    );
  },
};

export const checks: Check[] = [sequenceInOrder, pipelined, unterminatedAtEof, blankLine];
