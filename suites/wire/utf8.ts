import fc from "fast-check";
import { malformedUtf8 } from "../../generators/malformedUtf8.js";
import { type Check, describeReply, fail, pass, rpc } from "../harness/check.js";
import { expectPong, judgedBy, rejectedOrClosed, rejectedOrClosedOracle } from "../harness/expect.js";

export const malformedInput: Check = {
  id: "wire.utf8/malformed",
  rules: ["wire.utf8", "error.parse"],
  description:
    "Sends lines holding malformed UTF-8 (overlong forms, encoded surrogates, truncated sequences, invalid leads, lone continuations, code points above U+10FFFF), raw and inside string values; then checks the bridge still serves.",
  run: (ctx) =>
    ctx.property(
      malformedUtf8(),
      async (line) => {
        const conn = await ctx.session();
        const reply = await ctx.call(conn, Buffer.concat([line.bytes, Buffer.from("\n")]), { anyId: true });
        const parse = ctx.contract.codes["error.parse"];
        if (rejectedOrClosed(reply, parse)) return pass("rejected");
        return judgedBy(
          rejectedOrClosedOracle(parse),
          fail(
            `Malformed UTF-8 (${line.fault}, ${line.placement}) was not rejected.`,
            `${parse} with id null, or the connection closed`,
            describeReply(reply),
          ),
        );
      },
      { liveness: true },
    ),
};

export const unicodeText: Check = {
  id: "wire.utf8/unicode-text",
  rules: ["wire.utf8"],
  description:
    "Sends pings whose string ids hold any Unicode text (astral planes, combining marks, controls as escapes) and reads them back.",
  note: "localized text survives the round trip",
  run: (ctx) =>
    ctx.property(fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }), async (id) => {
      const conn = await ctx.session();
      const reply = await ctx.call(conn, rpc("ping", {}, id));
      return expectPong(reply, "a ping with a Unicode id", "wire.utf8");
    }),
};

export const checks: Check[] = [malformedInput, unicodeText];
