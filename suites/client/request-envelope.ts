// The client's own request, judged as a bridge would: TCP carrying one line of strict UTF-8 JSON
// within the limit, the request envelope, and nothing more before its response.
import type { RuleId } from "../../protocol/contract.js";
import type { Finding } from "../harness/check.js";
import { strictUtf8 } from "../harness/connection.js";
import type { CaseRun, ClientCheck } from "./context.js";
import { describeRun, line, notConnected, showBytes } from "./judge.js";
import { validResult } from "./replies.js";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** Other framings a client must not assume: HTTP request lines, a TLS handshake record, a WebSocket upgrade. */
const FOREIGN = /^(GET|POST|PUT|HEAD|OPTIONS|PATCH|DELETE|CONNECT|PRI) \S/;

export const checks: ClientCheck[] = [
  {
    id: "wire.request-envelope/client-request",
    rules: [
      "wire.request-envelope",
      "wire.ndjson",
      "wire.utf8",
      "wire.line-limit",
      "wire.tcp-stream",
      "wire.sequential-connection",
    ],
    description:
      "Reads the client's request (waiting a moment for any second request before answering), " +
      "then answers it with a valid result.",
    note: "The rules a bridge holds requests to bind the client that sends them.",
    async run(ctx) {
      const observeMs = Math.min(150, ctx.clientTimeoutMs / 4);
      const run = await ctx.runCase({
        observeMs,
        answer: (seen) => ({ bytes: line(validResult(seen)), after: "hold" }),
      });
      return notConnected(run) ?? judgeRequest(run, ctx.contract.jsonrpc, ctx.contract.limits.maxLineBytes);
    },
  },
];

function judgeRequest(run: CaseRun, jsonrpc: string, limit: number): Finding {
  const seen = run.request;
  const bad = (rule: RuleId, message: string, expected: string): Finding => ({
    verdict: "fail",
    message,
    expected,
    actual: seen ? `${showBytes(seen.line)} (${describeRun(run)})` : describeRun(run),
    rules: [rule],
    transcript: run.transcript,
    // A request that did not end in time may be a busy machine's doing.
    ...(seen?.ended === "waited" || run.killed ? { timed: true } : {}),
  });
  if (!seen || (seen.line.length === 0 && seen.ended !== "lf"))
    return bad("wire.ndjson", "The client connected but sent no request.", "one JSON object and LF");
  const head = seen.line.subarray(0, 16).toString("latin1");
  if (seen.line[0] === 0x16 || FOREIGN.test(head))
    return bad(
      "wire.tcp-stream",
      "The client spoke another protocol's framing (HTTP or TLS) instead of a plain line of JSON.",
      "a JSON line on the bare TCP stream",
    );
  if (seen.ended === "oversized")
    return bad(
      "wire.line-limit",
      `The client's request line is over ${limit} bytes.`,
      `at most ${limit} bytes before the LF`,
    );
  let text: string;
  try {
    text = strictUtf8.decode(seen.line);
  } catch {
    return bad("wire.utf8", "The client's request is not valid UTF-8.", "a request in strict UTF-8");
  }
  if (seen.ended !== "lf")
    return bad(
      "wire.ndjson",
      `The client's request did not end with LF (${
        seen.ended === "closed" ? "it closed the connection" : "none came in time"
      }).`,
      "one JSON object terminated by LF",
    );
  // U+FEFF is well-formed UTF-8 but not JSON whitespace: a request that starts with it is not one JSON object
  // (RFC 8259 section 8.1 forbids adding it), and a conformant bridge answers it with a parse error.
  if (text.startsWith("\ufeff"))
    return bad(
      "wire.ndjson",
      "The client's request line starts with a byte order mark (EF BB BF), which is not JSON.",
      "one JSON object per line, without a byte order mark",
    );
  let request: unknown;
  try {
    request = JSON.parse(text);
  } catch {
    return bad("wire.ndjson", "The client's request line is not RFC 8259 JSON.", "one JSON object per line");
  }
  if (!isObject(request))
    return bad("wire.ndjson", "The client's request line is not a JSON object.", "one JSON object per line");
  if (request.jsonrpc !== jsonrpc)
    return bad(
      "wire.request-envelope",
      `The request's jsonrpc is ${JSON.stringify(request.jsonrpc) ?? "missing"}.`,
      `jsonrpc "${jsonrpc}"`,
    );
  if (!("id" in request)) return bad("wire.request-envelope", "The request carries no id.", "a caller-chosen id");
  if (typeof request.method !== "string" || request.method === "")
    return bad("wire.request-envelope", "The request's method is not a non-empty string.", "a non-empty method string");
  if (!isObject(request.params))
    return bad(
      "wire.request-envelope",
      `The request's params is ${"params" in request ? "not an object" : "missing"}.`,
      "an object-valued params member",
    );
  if (seen.after.length)
    return bad(
      "wire.sequential-connection",
      "The client sent more before the response to its request arrived.",
      "one request, then its response, before the next",
    );
  return { verdict: "pass", message: `the request ${showBytes(seen.line, 120)} is one valid request line` };
}
