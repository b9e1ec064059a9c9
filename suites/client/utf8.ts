// wire.utf8 from the client's side: reply lines are decoded as strict UTF-8.
import { malformedUtf8 } from "../../generators/malformedUtf8.js";
import { encode } from "../../generators/validReply.js";
import type { ClientCheck } from "./context.js";
import { expectRejected, line, notConnected, requestIdOf } from "./judge.js";

export const checks: ClientCheck[] = [
  {
    id: "wire.utf8/malformed-reply",
    rules: ["wire.utf8", "validation.malformed-peer"],
    description:
      "Answers with a valid result carrying one more member, a string that holds malformed UTF-8: " +
      "overlong forms, surrogates, truncated sequences, bytes above U+10FFFF.",
    run: (ctx) =>
      ctx.property(malformedUtf8({ placements: ["raw"] }), async (bad) => {
        const run = await ctx.runCase({
          answer: (seen) => {
            const [head, tail] = encode({
              jsonrpc: ctx.contract.jsonrpc,
              id: requestIdOf(seen),
              result: { ok: true, note: "\u0000" },
            }).split("\\u0000") as [string, string];
            return { bytes: line(Buffer.concat([Buffer.from(head), bad.bytes, Buffer.from(tail)])), after: "hold" };
          },
        });
        return notConnected(run) ?? expectRejected(run, `a reply holding malformed UTF-8 (${bad.fault})`);
      }),
  },
];
