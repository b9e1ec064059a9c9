import fc from "fast-check";
import { validRequest } from "../../generators/validRequest.js";
import type { Check } from "../harness/check.js";
import { expectPong } from "../harness/expect.js";

export const splitWrites: Check = {
  id: "wire.tcp-stream/split-writes",
  rules: ["wire.tcp-stream"],
  description: "Sends a ping whose bytes are cut at random points into separate TCP writes, with pauses between them.",
  note: "a request may arrive in any number of TCP segments",
  run: (ctx) =>
    ctx.property(
      fc.record({
        request: validRequest({ ids: { structured: false } }),
        cuts: fc.uniqueArray(fc.integer({ min: 1, max: 80 }), { minLength: 1, maxLength: 8 }),
        delayMs: fc.integer({ min: 0, max: 15 }),
      }),
      async ({ request, cuts, delayMs }) => {
        const conn = await ctx.session();
        const reply = await ctx.call(conn, request, { splitAt: cuts, delayMs });
        return expectPong(reply, "a request split over several writes", "wire.tcp-stream");
      },
    ),
};

export const checks: Check[] = [splitWrites];
