import { nonStandardJson } from "../../generators/nonStandardJson.js";
import {
  type Check,
  describeReply,
  errorCode,
  Fault,
  fail,
  pass,
  type Reply,
  resultOf,
  warn,
} from "../harness/check.js";

export const nonJson: Check = {
  id: "error.parse/non-json",
  rules: ["error.parse"],
  description:
    "Sends lines of valid UTF-8 that RFC 8259 rejects: NaN and Infinity, comments, trailing commas, single quotes, bad numbers, raw control characters, bad escapes, a BOM, truncated documents, trailing garbage, unquoted keys, bad literals.",
  note: "answering by closing the connection, or ignoring a BOM as RFC 8259 allows, is tolerated",
  run: (ctx) =>
    ctx.property(
      nonStandardJson(),
      async ({ kind, text }) => {
        const conn = await ctx.session();
        // A lenient parser may read the template's id 1; that is judged below as accepting non-JSON.
        let reply: Reply;
        try {
          reply = await ctx.call(conn, text, { expectId: 1, orNullId: true });
        } catch (err) {
          // Answering non-JSON with a broken reply (e.g. echoing NaN) fails both rules.
          if (err instanceof Fault && err.kind === "violation" && err.detail.rule) {
            const { rule, actual = "" } = err.detail;
            const message = `Malformed JSON (${kind}) was not rejected, and the reply broke ${rule}: ${err.message}`;
            return fail(message, `${ctx.contract.codes["error.parse"]} (id null)`, actual, ["error.parse", rule]);
          }
          throw err;
        }
        if (errorCode(reply) === ctx.contract.codes["error.parse"]) return pass("rejected");
        if (reply.kind === "closed" || reply.kind === "reset")
          return warn(
            `Malformed JSON (${kind}) was answered by closing the connection.`,
            "-32700 (id null)",
            describeReply(reply),
          );
        if (kind === "bom" && resultOf(reply))
          return warn(
            "A line starting with a byte order mark was accepted (RFC 8259 lets parsers ignore it).",
            "-32700 (id null)",
            describeReply(reply),
          );
        return fail(
          `Malformed JSON (${kind}) was not rejected with a parse error.`,
          "-32700 (id null)",
          describeReply(reply),
        );
      },
      { liveness: true },
    ),
};

export const checks: Check[] = [nonJson];
