// wire.ndjson from the client's side: a response is one JSON object and LF; bytes that end with the
// connection are no response, and a byte order mark before the object is not JSON.
import type { ClientCheck } from "./context.js";
import { expectAccepted, expectRejected, line, notConnected } from "./judge.js";
import { validResult } from "./replies.js";

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export const checks: ClientCheck[] = [
  {
    id: "wire.ndjson/unterminated-reply",
    rules: ["wire.ndjson", "validation.malformed-peer"],
    description: "Answers with a valid result without the LF, then closes the connection.",
    note:
      "A line is JSON plus LF: text cut off by the end of the connection is an incomplete reply, " +
      "even where it parses.",
    async run(ctx) {
      const run = await ctx.runCase({ answer: (seen) => ({ bytes: Buffer.from(validResult(seen)), after: "close" }) });
      return notConnected(run) ?? expectRejected(run, "a reply without LF at the end of the connection");
    },
  },
  {
    id: "wire.ndjson/bom-reply",
    rules: ["wire.ndjson"],
    description: "Answers with a valid result preceded by a UTF-8 byte order mark (EF BB BF).",
    note:
      "EF BB BF is well-formed UTF-8 (U+FEFF), but not part of a JSON text: the line no longer holds one JSON " +
      "object (RFC 8259 section 8.1 forbids sending one, but lets parsers ignore it). Rejecting it is the strict " +
      "reading; accepting it is a warning.",
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
          "the strict reading of the contract's one JSON object per line does not.",
      };
    },
  },
  {
    id: "wire.ndjson/crlf-reply",
    rules: ["wire.ndjson"],
    description: "Answers with a valid result followed by CR LF.",
    note:
      "A CR is JSON whitespace (RFC 8259 section 2), so the line before the LF is still one JSON object: the " +
      "client accepts it as its result.",
    async run(ctx) {
      const run = await ctx.runCase({
        answer: (seen) => ({ bytes: line(Buffer.from(`${validResult(seen)}\r`)), after: "hold" }),
      });
      return notConnected(run) ?? expectAccepted(run, "a valid reply followed by CR LF");
    },
  },
];
