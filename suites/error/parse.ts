import { isDeepStrictEqual } from "node:util";
import {
  DEEP_ID,
  type DeepNesting,
  deepNesting,
  deepNestingClasses,
  deepNestingText,
} from "../../generators/deepNesting.js";
import {
  type NonStandardJsonLine,
  type NonStandardKind,
  nonStandardJson,
  nonStandardJsonClasses,
} from "../../generators/nonStandardJson.js";
import { type ValidJsonEdge, validJsonEdge, validJsonEdgeClasses } from "../../generators/validJsonEdge.js";
import type { Oracle } from "../../protocol/verdict.js";
import {
  type Check,
  type CheckContext,
  describeReply,
  errorCode,
  Fault,
  type Finding,
  fail,
  pass,
  type Reply,
  resultOf,
  warn,
} from "../harness/check.js";
import { classesFirst } from "../harness/classes.js";
import { judgedBy, rejectedOrClosedOracle } from "../harness/expect.js";

/**
 * Every line of every kind, one of each kind first, tried before the generated ones: a parser lenient to one value
 * of a kind (Python's json takes NaN but not -NaN), or to the BOM alone, is seen in every profile.
 */
const NON_JSON_KINDS: NonStandardKind[] = [
  "bom",
  "nan-infinity",
  "comment",
  "trailing-comma",
  "single-quotes",
  "bad-number",
  "control-char",
  "bad-escape",
  "truncated",
  "trailing-garbage",
  "unquoted-key",
  "bad-literal",
];
const NON_JSON_EXAMPLES: NonStandardJsonLine[] = nonStandardJsonClasses({ kinds: NON_JSON_KINDS });

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
        // A parse error or a close; anything else fails (a close only warns).
        const oracle = rejectedOrClosedOracle(ctx.contract.codes["error.parse"]);
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
            return judgedBy(
              oracle,
              fail(message, `${ctx.contract.codes["error.parse"]} (id null)`, actual, ["error.parse", rule]),
            );
          }
          throw err;
        }
        const parseError = `${ctx.contract.codes["error.parse"]} (id null)`;
        if (errorCode(reply) === ctx.contract.codes["error.parse"]) return pass("rejected");
        if (reply.kind === "closed" || reply.kind === "reset")
          return warn(
            `Malformed JSON (${kind}) was answered by closing the connection.`,
            parseError,
            describeReply(reply),
          );
        if (kind === "bom" && resultOf(reply))
          return warn(
            "A line starting with a byte order mark was accepted (RFC 8259 lets parsers ignore it).",
            parseError,
            describeReply(reply),
          );
        return judgedBy(
          oracle,
          fail(`Malformed JSON (${kind}) was not rejected with a parse error.`, parseError, describeReply(reply)),
        );
      },
      { ...classesFirst(NON_JSON_EXAMPLES, ctx.runs - NON_JSON_EXAMPLES.length), liveness: true },
    ),
};

const DEEP_EXAMPLES: DeepNesting[] = deepNestingClasses();

export const deepNestingCheck: Check = {
  id: "error.parse/deep-nesting",
  rules: ["error.parse"],
  description:
    "Sends lines nested thousands of levels deep (up to 10,000 arrays or objects): inside a ping's params, as the whole line, and unbalanced; then checks the bridge still serves.",
  note: "RFC 8259 section 9 lets a parser limit nesting depth, so a valid deep request may be served or refused as a parse error or an invalid request; closing the connection without a reply is a warning; unbalanced brackets are not JSON (a parse error); the bridge keeps serving",
  run: (ctx) =>
    ctx.property(
      deepNesting(),
      async (nesting) => {
        const conn = await ctx.session();
        const reply = await ctx.call(conn, deepNestingText(nesting), { expectId: DEEP_ID, orNullId: true });
        const { codes } = ctx.contract;
        const code = errorCode(reply);
        const what = `${nesting.depth} levels of ${nesting.bracket}s (${nesting.place})`;
        const [parse, invalid] = [codes["error.parse"], codes["error.invalid-request"]];
        // RFC 8259 section 9 lets a parser limit nesting: the limit is answered like any other line a parser
        // refuses, with a parse error. A close answers nothing: tolerated, as for malformed UTF-8, but a warning.
        if (reply.kind === "closed" || reply.kind === "reset")
          return warn(
            `A line nested ${what} was answered by closing the connection, without a reply.`,
            `${parse} (a depth limit)${nesting.place === "params" ? ", or the ping served" : ""}`,
            describeReply(reply),
          );
        // Unbalanced brackets are not JSON; a valid document may still meet a depth limit (a parse error) or, as the
        // whole line, be read as a request that is not an object (an invalid request).
        const allowed =
          nesting.place === "unbalanced"
            ? [codes["error.parse"]]
            : [codes["error.parse"], codes["error.invalid-request"]];
        if (code !== undefined && allowed.includes(code)) return pass(`${what}: refused`);
        if (nesting.place === "params" && resultOf(reply)?.ok === true) return pass(`${what}: served`);
        const refusals = allowed.map((c) => [{ path: ["error", "code"], equals: c }]);
        const served = nesting.place === "params" ? [[{ path: ["result", "ok"], equals: true }]] : [];
        // A close is a warning, not a failure: a reproducer lets it pass.
        return judgedBy(
          { kind: "reply", expect: [{ anyOf: [...refusals, ...served] }], orClose: true },
          fail(
            `A line nested ${what} was not answered as the contract allows.`,
            nesting.place === "params"
              ? `the ping served, or ${parse} / ${invalid} (a depth limit)`
              : nesting.place === "root"
                ? `${invalid} (not a request object) or ${parse} (a depth limit)`
                : `${parse} (not JSON)`,
            describeReply(reply),
          ),
        );
      },
      {
        examples: DEEP_EXAMPLES,
        runs: 8,
        liveness: true,
      },
    ),
};

const quote = (s: string) => JSON.stringify(s);

/** Whether a reply's id is one of the JSON texts the request may be read as having. */
const idOneOf = (id: unknown, texts: string[]) => texts.some((t) => isDeepStrictEqual(JSON.parse(t), id));

/** What a bridge may answer to a valid-grammar edge case: the readings RFC 8259 leaves it, and nothing else. */
function judgeEdge(ctx: CheckContext, edge: ValidJsonEdge, reply: Reply): Finding {
  const { codes, methods } = ctx.contract;
  const code = errorCode(reply);
  const fault = {
    "escaped-control": "an escaped control character in the",
    "lone-surrogate": "a lone surrogate escape in the",
    "duplicate-key": "a duplicate",
  }[edge.kind];
  const what = `A request with ${fault} ${edge.place}`;
  const unknown = edge.methods.filter((m) => !methods.includes(m));
  const code_ = (c: number | undefined) => [{ path: ["error", "code"], equals: c }];
  const allowed: Oracle = {
    kind: "reply",
    expect: [
      {
        anyOf: [
          ...(edge.kind === "escaped-control"
            ? []
            : [code_(codes["error.parse"]), code_(codes["error.invalid-request"])]),
          ...(unknown.length ? [code_(codes["error.method-not-found"])] : []),
          ...(edge.methods.includes("ping") ? [[{ path: ["result", "ok"], equals: true }]] : []),
        ],
      },
    ],
  };
  const judgedFail = (...args: Parameters<typeof fail>) => judgedBy(allowed, fail(...args));
  if (reply.kind !== "response")
    return judgedFail(
      `${what} got no reply: it is valid JSON grammar (RFC 8259), so it is answered like any other line.`,
      "a response",
      describeReply(reply),
      ["error.parse"],
    );
  const { response } = reply;
  // A refusal may carry the id the bridge read (one of the readings) or, where it read none, null.
  const refused =
    (code === codes["error.parse"] || code === codes["error.invalid-request"]) &&
    (response.id === null || idOneOf(response.id, edge.ids));
  // An escaped control character is valid JSON and leaves a well-formed envelope: the method is merely unknown.
  if (refused && edge.kind === "escaped-control")
    return judgedFail(
      `${what} was refused as ${code === codes["error.parse"] ? "malformed JSON" : "an invalid request"}` +
        ", but it is a valid request for an unknown method.",
      `${codes["error.method-not-found"]} (an unknown method)`,
      describeReply(reply),
      [code === codes["error.parse"] ? "error.parse" : "error.method-not-found"],
    );
  // RFC 8259 leaves unpaired surrogates (section 8.2) and duplicate names (section 4) to the receiver: refusing
  // them is one reading. Names SHOULD be unique binds the sender of the object (here this tool), not its receiver:
  // of a receiver it says only that its behaviour is unpredictable (the last pair, the first, an error), so no
  // reading is a deviation to warn about.
  if (refused && edge.kind !== "escaped-control") return pass("refused");
  if (!idOneOf(response.id, edge.ids))
    return judgedFail(
      `${what} was answered with an id it does not hold.`,
      `id ${edge.ids.join(" or ")}`,
      describeReply(reply),
      ["wire.response-envelope"],
    );
  if (code === codes["error.method-not-found"] && unknown.length > 0) return pass("unknown method");
  if (resultOf(reply)?.ok === true && edge.methods.includes("ping")) return pass("served");
  return judgedFail(
    `${what} was answered as none of the methods it may be read as (${edge.methods.map(quote).join(", ")}).`,
    unknown.length === edge.methods.length
      ? `${codes["error.method-not-found"]} (an unknown method)`
      : `{"ok":true}${unknown.length ? ` or ${codes["error.method-not-found"]}` : ""}`,
    describeReply(reply),
    [unknown.length === edge.methods.length ? "error.method-not-found" : "error.parse"],
  );
}

/** Every constant of every edge kind (generators/validJsonEdge.ts), before the generated ones. */
const EDGE_EXAMPLES: ValidJsonEdge[] = validJsonEdgeClasses();

export const validEdges: Check = {
  id: "error.parse/valid-edges",
  rules: ["error.parse", "error.method-not-found"],
  description:
    "Sends valid-grammar requests at RFC 8259's edges: escaped control characters (\\u0000, \\n ...) in the method name, unpaired surrogate escapes (\\ud800) in the id, method or params, and duplicate member names; then checks the bridge still serves.",
  note: "escaped controls are valid JSON, so the method is unknown (method not found), never a parse error or a trimmed name; unpaired surrogates and duplicate names may be read either way RFC 8259 allows, or refused (a parse error or an invalid request, with id null or an id the request holds), but are answered",
  run: (ctx) =>
    ctx.property(
      validJsonEdge(),
      async (edge) => {
        const conn = await ctx.session();
        return judgeEdge(ctx, edge, await ctx.call(conn, edge.text, { anyId: true }));
      },
      { ...classesFirst(EDGE_EXAMPLES, Math.min(ctx.runs, 30) - EDGE_EXAMPLES.length), liveness: true },
    ),
};

export const checks: Check[] = [nonJson, deepNestingCheck, validEdges];
