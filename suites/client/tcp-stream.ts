// wire.tcp-stream from the client's side: a reply may arrive in any number of TCP segments.
import fc from "fast-check";
import type { ClientCheck } from "./context.js";
import { expectAccepted, line, notConnected } from "./judge.js";
import { validResult } from "./replies.js";

export const checks: ClientCheck[] = [
  {
    id: "wire.tcp-stream/segmented-reply",
    rules: ["wire.tcp-stream"],
    description:
      "Answers with a valid result split into several TCP segments " +
      "(one byte each at the edges, split points generated).",
    note: "TCP is a byte stream: the client reads until the LF however the reply is segmented.",
    run: (ctx) =>
      ctx.property(
        fc.uniqueArray(fc.double({ min: 0.01, max: 0.99, noNaN: true }), { minLength: 1, maxLength: 4 }),
        async (cuts) => {
          const run = await ctx.runCase({
            answer: (seen) => {
              const bytes = line(validResult(seen));
              const at = [...new Set(cuts.map((c) => Math.max(1, Math.floor(c * bytes.length))))].sort((a, b) => a - b);
              return { bytes, splitAt: at, after: "hold" };
            },
          });
          return notConnected(run) ?? expectAccepted(run, `a valid reply in ${cuts.length + 1} segments`);
        },
        { examples: [[0.02, 0.5, 0.98]], runs: Math.max(1, Math.ceil(ctx.runs / 2)) },
      ),
  },
];
