import fc from "fast-check";
import { type MalformedUtf8Line, malformedUtf8, malformedUtf8Classes } from "../../generators/malformedUtf8.js";
import { type Check, describeReply, fail, pass, rpc } from "../harness/check.js";
import { classesFirst } from "../harness/classes.js";
import { expectPong, judgedBy, rejectedOrClosed, rejectedOrClosedOracle } from "../harness/expect.js";

/** One line of every fault (Markus Kuhn's categories), raw and in every string of a request, before the generated ones. */
const UTF8_CLASSES: MalformedUtf8Line[] = malformedUtf8Classes();

/** Text a decoder or a JSON writer gets wrong first: 2-, 3- and 4-byte characters, combining marks, escapes. */
const TEXT_CLASSES = ["\u00e9", "\u20ac", "\u{1d11e}", "e\u0301", "\u0000\u001f", "\u2028\u2029", "\ufeff", '"\\/'];

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
      { ...classesFirst(UTF8_CLASSES, ctx.runs - UTF8_CLASSES.length), liveness: true },
    ),
};

export const unicodeText: Check = {
  id: "wire.utf8/unicode-text",
  rules: ["wire.utf8"],
  description:
    "Sends pings whose string ids hold any Unicode text (astral planes, combining marks, controls as escapes) and reads them back.",
  note: "localized text survives the round trip",
  run: (ctx) =>
    ctx.property(
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }),
      async (id) => {
        const conn = await ctx.session();
        const reply = await ctx.call(conn, rpc("ping", {}, id));
        return expectPong(reply, "a ping with a Unicode id", "wire.utf8");
      },
      classesFirst(TEXT_CLASSES, ctx.runs - TEXT_CLASSES.length),
    ),
};

export const checks: Check[] = [malformedInput, unicodeText];
