import { type Check, describeReply, errorCode, fail, pass, resultOf, rpc, skip, warn } from "../harness/check.js";

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
        return fail(
          `Request ${i + 1} of 20 (${request.method}) got no response.`,
          "one response line per request",
          describeReply(reply),
        );
    }
    const stray = await conn.read(Math.min(200, ctx.timeoutMs));
    if (stray.kind === "line")
      return fail(
        "A line arrived that answers no request.",
        "exactly one line per request",
        stray.bytes.toString("utf8").slice(0, 300),
        ["wire.ndjson"],
      );
    return pass("20 sequential requests got 20 responses, in order, and nothing more.");
  },
};

export const pipelined: Check = {
  id: "wire.ndjson/pipelined",
  rules: ["wire.ndjson"],
  description:
    "Writes two requests in one TCP write (pipelining, which the contract does not require) and reads what comes back.",
  note: "pipelining itself is not required: a second line left unanswered is information, not a failure",
  async run(ctx) {
    const conn = await ctx.session();
    await conn.write(`${JSON.stringify(rpc("ping", {}, "first"))}\n${JSON.stringify(rpc("ping", {}, "second"))}\n`);
    const ids: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      const read = await conn.read(ctx.timeoutMs);
      if (read.kind !== "line") break;
      try {
        ids.push((JSON.parse(read.bytes.toString("utf8")) as { id?: unknown }).id);
      } catch {
        ids.push(undefined);
      }
    }
    if (ids[0] === "second")
      return fail(
        "The second pipelined request was answered before the first.",
        `ids in order: "first", "second"`,
        JSON.stringify(ids),
      );
    if (ids.length < 2)
      return skip(
        `Information: the bridge answered ${ids.length} of 2 pipelined requests; pipelining is not required.`,
      );
    return pass("Both pipelined requests were answered, in order.");
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
    if (errorCode(reply) === ctx.contract.codes["error.parse"]) return pass("The empty line was answered with -32700.");
    if (reply.kind === "closed" || reply.kind === "reset")
      return warn("The bridge closed the connection on an empty line.", "-32700 (id null)", describeReply(reply));
    if (reply.kind === "timeout") {
      const pong = await ctx.call(conn, rpc("ping", {}, "after-blank"));
      if (resultOf(pong)?.ok === true)
        return warn(
          "The empty line was ignored (tolerated; the strict reading answers -32700).",
          "-32700 (id null)",
          "no response; the next ping was answered",
        );
      return fail(
        "After an empty line the bridge stopped answering on the connection.",
        "-32700, or the line ignored and the next request served",
        describeReply(pong),
      );
    }
    return fail("An empty line was not answered with a parse error.", "-32700 (id null)", describeReply(reply));
  },
};

export const checks: Check[] = [sequenceInOrder, pipelined, blankLine];
