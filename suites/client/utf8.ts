// wire.utf8 from the client's side: reply lines are decoded as strict UTF-8.
import { malformedUtf8 } from "../../generators/malformedUtf8.js";
import { encode } from "../../generators/validReply.js";
import { type ClientCheck, expectAccepted, expectRejected, line, notConnected, requestIdOf } from "./context.js";
import { validResult } from "./replies.js";

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

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
  {
    id: "wire.utf8/bom-reply",
    rules: ["wire.utf8"],
    description: "Answers with a valid result preceded by a UTF-8 byte order mark (EF BB BF).",
    note:
      "A BOM is not part of a JSON text on the wire (RFC 8259 section 8.1 forbids sending one, " +
      "but lets parsers ignore it): rejecting it is the strict reading; accepting it is a warning.",
    async run(ctx) {
      const run = await ctx.runCase({
        answer: (seen) => ({ bytes: line(Buffer.concat([BOM, Buffer.from(validResult(seen))])), after: "hold" }),
      });
      const not = notConnected(run);
      if (not) return not;
      const rejected = expectRejected(run, "a reply that starts with a byte order mark");
      if (rejected.verdict === "pass" || run.killed) return rejected;
      const accepted = expectAccepted(run, "a reply that starts with a byte order mark");
      if (accepted.verdict !== "pass") return rejected;
      return {
        ...rejected,
        verdict: "warn",
        message:
          `${rejected.message} RFC 8259 lets a parser ignore a BOM; ` +
          "the strict reading of the contract's UTF-8 lines does not.",
      };
    },
  },
];
