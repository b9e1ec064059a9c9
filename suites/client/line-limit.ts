// wire.line-limit from the client's side: a response line of exactly the limit is served, one
// byte more is rejected, and the limit counts bytes, not characters.
import type { ClientCheck } from "./context.js";
import { expectAccepted, expectRejected, line, notConnected } from "./judge.js";
import { multibyteError, paddedResult } from "./replies.js";

export const checks: ClientCheck[] = [
  {
    id: "wire.line-limit/oversized-reply",
    rules: ["wire.line-limit", "validation.malformed-peer"],
    description:
      "Answers with a valid result padded with spaces to the limit plus one byte; then with a valid error " +
      "whose multibyte message makes it the limit plus one byte in far fewer characters.",
    note: "The limit is in bytes: a reply over it is rejected however few characters it holds.",
    async run(ctx) {
      const over = ctx.contract.limits.maxLineBytes + 1;
      const cases = [
        {
          what: `a ${over}-byte reply line`,
          make: (seen: Parameters<typeof paddedResult>[0]) => paddedResult(seen, over),
        },
        {
          what: `a ${over}-byte reply line of multibyte text (fewer characters than the limit)`,
          make: (seen: Parameters<typeof paddedResult>[0]) => multibyteError(seen, ctx.contract, over),
        },
      ];
      for (const c of cases) {
        const run = await ctx.runCase({ answer: (seen) => ({ bytes: line(c.make(seen)), after: "hold" }) });
        const finding = notConnected(run) ?? expectRejected(run, c.what);
        if (finding.verdict !== "pass") return finding;
      }
      return { verdict: "pass", message: `replies of ${over} bytes were rejected, in ASCII and in multibyte text` };
    },
  },
  {
    id: "wire.line-limit/exact-limit-reply",
    rules: ["wire.line-limit"],
    description: "Answers with a valid result padded with spaces to exactly the limit (before the LF).",
    note: "A payload of exactly the limit is legal: the client accepts it.",
    async run(ctx) {
      const limit = ctx.contract.limits.maxLineBytes;
      const run = await ctx.runCase({ answer: (seen) => ({ bytes: line(paddedResult(seen, limit)), after: "hold" }) });
      return notConnected(run) ?? expectAccepted(run, `a valid reply of exactly ${limit} bytes`);
    },
  },
];
