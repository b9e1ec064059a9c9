// validation.malformed-peer: a client rejects every reply that is not one valid response to its
// request, whatever it carries, and a connection that ends or breaks without one.
import {
  type MalformedReply,
  malformedReply,
  malformedReplyExamples,
  type ReplyFlaw,
} from "../../generators/malformedReply.js";
import type { ClientCheck, ClientContext } from "./context.js";
import { expectRejected, line, notConnected, requestIdOf } from "./judge.js";

const WHAT: Record<ReplyFlaw, string> = {
  "non-json": "reply lines that are not RFC 8259 JSON (NaN, Infinity, comments, trailing commas, truncation ...)",
  "non-object": "reply lines that are JSON but not an object (null, a number, a string, a batch array)",
  jsonrpc: "replies whose jsonrpc member is missing or not the contract's version",
  id: 'replies whose id is missing, differs in value, or equals the request\'s only loosely ("1" or true for 1)',
  "result-and-error": "replies with both result and error, or neither",
  "error-shape": "error replies whose code is not an integer (a boolean is not one) or whose message is not a string",
};

function flawCheck(flaw: ReplyFlaw): ClientCheck {
  return {
    id: `validation.malformed-peer/${flaw}`,
    rules: ["validation.malformed-peer"],
    description: `Answers the client's request with ${WHAT[flaw]}, then keeps the connection open.`,
    run: (ctx: ClientContext) =>
      ctx.property(
        malformedReply({ flaws: [flaw], jsonrpc: ctx.contract.jsonrpc }),
        async (reply: MalformedReply) => {
          const run = await ctx.runCase({
            answer: (seen) => ({ bytes: line(reply.render(requestIdOf(seen))), after: "hold" }),
          });
          return notConnected(run) ?? expectRejected(run, `a reply with ${reply.detail}`);
        },
        { examples: malformedReplyExamples(ctx.contract.jsonrpc).filter((r) => r.flaw === flaw) },
      ),
  };
}

const noReply: ClientCheck = {
  id: "validation.malformed-peer/no-reply",
  rules: ["validation.malformed-peer"],
  description:
    "Reads the client's request, then closes the connection (FIN) without a reply; " +
    "then, in a second case, resets it (RST).",
  note: "A connection that ends without a response is no response: the client reports a failure, never a result.",
  async run(ctx) {
    for (const then of ["close", "reset"] as const) {
      const run = await ctx.runCase({ answer: () => ({ after: then }) });
      const finding =
        notConnected(run) ??
        expectRejected(run, `a connection ${then === "close" ? "closed" : "reset"} without a reply`);
      if (finding.verdict !== "pass") return finding;
    }
    return { verdict: "pass", message: "a connection closed or reset without a reply was reported as a failure" };
  },
};

export const checks: ClientCheck[] = [
  ...(["non-json", "non-object", "jsonrpc", "id", "result-and-error", "error-shape"] as const).map(flawCheck),
  noReply,
];
