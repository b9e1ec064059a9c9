import fc from "fast-check";
import { validRequest } from "../../generators/validRequest.js";
import { type Check, rpc } from "../harness/check.js";
import { expectPong } from "../harness/expect.js";

export const splitWrites: Check = {
  id: "wire.tcp-stream/split-writes",
  rules: ["wire.tcp-stream"],
  description:
    "Sends a ping whose bytes are cut at random points into separate TCP writes (segments of their own), " +
    "some with a pause of a few milliseconds between them so the bridge reads them apart.",
  note: "a request may arrive in any number of TCP segments",
  run: (ctx) =>
    ctx.property(
      fc.record({
        request: validRequest({ ids: { structured: false } }),
        cuts: fc.uniqueArray(fc.integer({ min: 1, max: 80 }), { minLength: 1, maxLength: 8 }),
        // A segment of its own needs no pause; a pause of a millisecond or two lets the bridge read it alone.
        delayMs: fc.constantFrom(0, 1, 2),
      }),
      async ({ request, cuts, delayMs }) => {
        const conn = await ctx.session();
        const reply = await ctx.call(conn, request, { splitAt: cuts, delayMs });
        return expectPong(reply, "a request split over several writes", "wire.tcp-stream");
      },
    ),
};

export const halfClose: Check = {
  id: "wire.tcp-stream/half-close",
  rules: ["wire.tcp-stream"],
  description: "Sends a complete ping with its LF, then half-closes the connection (FIN) and reads.",
  note: "a FIN ends the client's bytes, not the bridge's: a complete line received before it is still answered",
  async run(ctx) {
    const conn = await ctx.session();
    await conn.write(`${JSON.stringify(rpc("ping", {}, "before-fin"))}\n`);
    conn.endWrites();
    const reply = await ctx.read(conn, { expectId: "before-fin" });
    return expectPong(reply, "a ping followed by a half-close", "wire.tcp-stream");
  },
};

export const checks: Check[] = [splitWrites, halfClose];
