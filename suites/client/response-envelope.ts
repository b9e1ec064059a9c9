// wire.response-envelope from the client's side: every response the rule allows is taken as what
// it is, a result as the result and an error as the remote error, however RFC 8259 encodes it.
import fc from "fast-check";
import { type Encoding, type ValidReply, validReply } from "../../generators/validReply.js";
import type { ClientCheck } from "./context.js";
import { expectAccepted, expectRemoteError, line, methodOf, notConnected, requestIdOf } from "./judge.js";

/** Tried first whatever the seed: the plainest encoding, and every variation at once. */
const ENCODINGS: Encoding[] = [
  { space: "", order: "as-built", escape: "none" },
  { space: " \t ", order: "reversed", escape: "all" },
];
const examples = (kind: "result" | "error"): ValidReply[] =>
  ENCODINGS.flatMap((encoding) => fc.sample(validReply({ kinds: [kind], encoding }), { numRuns: 1, seed: 1 }));

export const checks: ClientCheck[] = [
  {
    id: "wire.response-envelope/valid-results",
    rules: ["wire.response-envelope"],
    description:
      "Answers with a valid result for the requested method, " +
      "in varied encodings (member order, whitespace, \\u escapes).",
    note: "A client accepts every response the envelope allows: JSON that reads back the same is the same response.",
    run: (ctx) =>
      ctx.property(
        validReply({ kinds: ["result"], jsonrpc: ctx.contract.jsonrpc }),
        async (reply: ValidReply) => {
          const run = await ctx.runCase({
            answer: (seen) => ({
              bytes: line(reply.render({ id: requestIdOf(seen), method: methodOf(seen) })),
              after: "hold",
            }),
          });
          return notConnected(run) ?? expectAccepted(run, `a valid result (${describe(reply)})`);
        },
        { examples: examples("result") },
      ),
  },
  {
    id: "wire.response-envelope/valid-errors",
    rules: ["wire.response-envelope"],
    description: "Answers with a valid error (any integer code, any message, optional data), in varied encodings.",
    note:
      "A valid error response is the server's answer: " +
      "the client surfaces it as a remote error, not as a malformed reply.",
    run: (ctx) =>
      ctx.property(
        validReply({ kinds: ["error"], jsonrpc: ctx.contract.jsonrpc }),
        async (reply: ValidReply) => {
          const run = await ctx.runCase({
            answer: (seen) => ({
              bytes: line(reply.render({ id: requestIdOf(seen), method: methodOf(seen) })),
              after: "hold",
            }),
          });
          return notConnected(run) ?? expectRemoteError(run, `a valid ${reply.detail} (${describe(reply)})`);
        },
        { examples: examples("error") },
      ),
  },
];

const describe = (r: ValidReply) =>
  `space ${JSON.stringify(r.encoding.space)}, order ${r.encoding.order}, escapes ${r.encoding.escape}`;
