// wire.ndjson from the client's side: a response is a line, ended by LF; bytes that end with the
// connection are no response.
import { type ClientCheck, expectRejected, notConnected } from "./context.js";
import { validResult } from "./replies.js";

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
];
