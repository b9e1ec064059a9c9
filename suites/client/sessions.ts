// Sessions, not single replies: the hostile bridge answers every request of a connection (auth
// first where the client was given a token), and plays what a real bridge may do across them: a
// close in the middle of a reply, a full queue on every try, a new connection that must authorize
// again, replies a byte per segment, and more lines in one write than the reply alone.
import { encode } from "../../generators/validReply.js";
import type { Contract } from "../../protocol/contract.js";
import type { Finding } from "../harness/check.js";
import type { Answer, At, CaseRun, CaseSpec, ClientCheck, ClientContext, SeenRequest } from "./context.js";
import {
  describeRun,
  expectAccepted,
  expectRejected,
  line,
  methodOf,
  NEEDS_OUTCOME,
  notConnected,
  requestIdOf,
  servedFairly,
} from "./judge.js";
import { validResult } from "./replies.js";

/** The token the session cases give the client: made up for the case, not a secret of any bridge. */
export const SESSION_TOKEN = "client-mode-session-token";

/** A session case: the token in the contract's token variable, auth answered, the rest as `command` says. */
function session(
  ctx: ClientContext,
  command: (seen: SeenRequest, at: At) => Answer,
  drip: Pick<Answer, "dripMs"> = {},
  more: Pick<CaseSpec, "timeout" | "extraMs"> = {},
): CaseSpec {
  return {
    ...more,
    session: true,
    env: { [ctx.contract.defaults.tokenEnv]: SESSION_TOKEN },
    answer: (seen, at) => ({
      ...(methodOf(seen) === "auth" ? authAnswer(ctx.contract, seen) : command(seen, at)),
      ...drip,
    }),
  };
}

function authAnswer(contract: Contract, seen: SeenRequest): Answer {
  const token = (seen.request?.params as { token?: unknown } | undefined)?.token;
  const result = { authorized: token === SESSION_TOKEN };
  return { bytes: line(encode({ jsonrpc: contract.jsonrpc, id: requestIdOf(seen), result })), after: "hold" };
}

const errorLine = (contract: Contract, seen: SeenRequest, rule: string, message: string) =>
  line(encode({ jsonrpc: contract.jsonrpc, id: requestIdOf(seen), error: { code: contract.codes[rule]!, message } }));

/** The requests the client sent in the case, auth left out. */
const requests = (run: CaseRun) => run.requests.flat().filter((r) => methodOf(r) !== "auth").length;

const closedMidReply: ClientCheck = {
  id: "validation.malformed-peer/closed-mid-reply",
  rules: ["validation.malformed-peer", "validation.finite-timeout"],
  description:
    "A session: auth (where the client authorizes) answered, then the request's reply cut after part of its " +
    "line and the connection closed; every connection the client makes alike.",
  note:
    "Half a reply is no reply: the client reports a failure within its timeout, " +
    "whether or not it reconnects first; one that retries without end never ends.",
  async run(ctx) {
    // Cut after its first byte, in its middle, and just before its LF: fixed cases, each judged as it ends.
    for (const [cut, where] of [
      [0, "after its first byte"],
      [0.5, "in its middle"],
      [1, "just before its LF"],
    ] as const) {
      const run = await ctx.runCase(
        session(ctx, (seen) => {
          const bytes = line(validResult(seen));
          return { bytes: bytes.subarray(0, 1 + Math.floor(cut * (bytes.length - 3))), after: "close" };
        }),
      );
      const what = `a reply cut ${where}, then a close (on each of ${run.connections} connection(s))`;
      const finding =
        notConnected(run) ??
        expectRejected(run, what, [run.killed ? "validation.finite-timeout" : "validation.malformed-peer"]);
      if (finding.verdict !== "pass") return finding;
    }
    return { verdict: "pass", message: "a reply cut short by a close was reported as a failure, at every cut" };
  },
};

const reconnectAuth: ClientCheck = {
  id: "validation.security/reauth-after-reconnect",
  rules: ["validation.security"],
  description:
    "A session with a token in the contract's token variable: auth answered, then the first connection closed " +
    "without a reply to the request; on any later connection, auth and the request answered as a bridge would.",
  note:
    "Authorization is per connection: a client that reconnects authorizes the new connection before its request. " +
    "A client that does not reconnect, or sends no auth, leaves this unobserved (skip).",
  async run(ctx) {
    const run = await ctx.runCase(
      session(ctx, (seen, at) => {
        if (at.connection === 0) return { after: "close" };
        // Served where auth came first on this connection, as a bridge with a token configured would.
        return at.index > 0
          ? { bytes: line(validResult(seen)), after: "hold" }
          : { bytes: errorLine(ctx.contract, seen, "error.unauthorized", "unauthorized"), after: "hold" };
      }),
    );
    const blocked = notConnected(run);
    if (blocked) return blocked;
    const tokenEnv = ctx.contract.defaults.tokenEnv;
    if (!run.requests.some((c) => c.some((r) => methodOf(r) === "auth")))
      return {
        verdict: "skip",
        message: `the client sent no auth request with a token in ${tokenEnv}`,
        reasonKind: "not-observable",
      };
    const unauthorized = run.requests.findIndex((c, i) => i > 0 && c.length > 0 && methodOf(c[0]!) !== "auth");
    if (unauthorized !== -1)
      return {
        verdict: "fail",
        message:
          `The client reconnected and sent ${JSON.stringify(methodOf(run.requests[unauthorized]![0]!))} ` +
          `on connection ${unauthorized + 1} without authorizing it: authorization never carries over.`,
        expected: "auth first on every connection",
        actual: `${run.connections} connection(s), ${requests(run)} request(s); ${describeRun(run)}`,
        transcript: run.transcript,
        rules: ["validation.security"],
      };
    if (run.connections < 2)
      return {
        verdict: "skip",
        message:
          "the client did not reconnect after the connection closed without a reply, so re-authorization is not observable",
        reasonKind: "not-observable",
      };
    return { verdict: "pass", message: `authorized each of ${run.connections} connections before its request` };
  },
};

const queueFull: ClientCheck = {
  id: "wire.response-envelope/queue-full",
  rules: ["wire.response-envelope", "validation.finite-timeout"],
  description:
    "A session: auth (where the client authorizes) answered, then every other request, on every connection, " +
    "answered with the contract's queue-full error.",
  note:
    "A full queue is the bridge's answer: the client surfaces it as a remote error within its timeout. " +
    "It may try again, but one that keeps trying until its time runs out never reports the full queue.",
  async run(ctx) {
    const run = await ctx.runCase(
      session(ctx, (seen) => ({
        bytes: errorLine(ctx.contract, seen, "error.queue-full", "command queue is full"),
        after: "hold",
      })),
    );
    const blocked = notConnected(run);
    if (blocked) return blocked;
    const what = `the queue-full error (${ctx.contract.codes["error.queue-full"]}) to each of ${requests(run)} request(s)`;
    if (run.killed) return expectRejected(run, what, ["validation.finite-timeout"]);
    if (run.reported === "remote-error") return { verdict: "pass", message: `surfaced ${what}` };
    // Without an outcome line, a non-zero exit is all there is to see: the full queue was not taken as a result.
    if (!run.reported && run.outcome === "rejected") return { verdict: "pass", message: `exited non-zero on ${what}` };
    return {
      verdict: "fail",
      message: `The client did not surface ${what} as a remote error.`,
      expected: 'the full queue reported as a remote error (AICONTROL_OUTCOME "remote-error", or a non-zero exit)',
      actual: describeRun(run),
      transcript: run.transcript,
      rules: ["wire.response-envelope"],
    };
  },
};

/** How many times its timeout the client is given for a reply written a byte per segment. */
const SEGMENT_STRETCH = 5;

/** Two-, three- and four-byte characters: the drip pauses inside each, so a client reads every one in pieces. */
const MULTIBYTE = "é€😀".repeat(2);

/** The method's plain result, with one more member: the multibyte text. */
const withNote = (seen: SeenRequest) => ({
  ...(JSON.parse(validResult(seen)) as { result: object }).result,
  note: MULTIBYTE,
});

const byteByByte: ClientCheck = {
  id: "wire.tcp-stream/byte-per-segment-session",
  rules: ["wire.tcp-stream"],
  description:
    "A session: every reply (auth where the client authorizes, then the request's valid result, " +
    "with one more member of multibyte text) written one byte per TCP segment.",
  note:
    "TCP is a byte stream: a reply a byte at a time, cut inside its characters, is still the same line. " +
    `The client is given ${SEGMENT_STRETCH} times its timeout here, as every segment waits on both processes' turns.`,
  async run(ctx) {
    // Each segment costs a turn of this process and one of the client's: on a busy machine a reply of a few
    // hundred segments takes longer than a timeout that bounds one request. The case is about the stream, not
    // the timeout, so the client gets room for it where its command takes {timeout}.
    const timeoutMs = ctx.options.command.includes("{timeout}")
      ? ctx.clientTimeoutMs * SEGMENT_STRETCH
      : ctx.clientTimeoutMs;
    const serve = () =>
      ctx.runCase(
        session(
          ctx,
          (seen) => ({
            bytes: line(encode({ jsonrpc: ctx.contract.jsonrpc, id: requestIdOf(seen), result: withNote(seen) })),
            after: "hold",
          }),
          { dripMs: 0 },
          { timeout: String(timeoutMs / 1000), extraMs: timeoutMs - ctx.clientTimeoutMs },
        ),
      );
    // A client that gave up near its timeout while this tool was still writing the reply was starved by this
    // machine, not by the stream: the case is served again, and said out of reach where it never could be.
    const starved = (r: CaseRun) => (r.unsentAtExit ?? 0) > 0 && late(timeoutMs, r);
    const run = await servedFairly(
      serve,
      starved,
      (r) =>
        `the reply could not be written a byte per segment within the timeout the client was given ` +
        `(${r.unsentAtExit} bytes still unwritten when it gave up)`,
    );
    if ("verdict" in run) return run;
    return notConnected(run) ?? timedIfLate(timeoutMs, run, expectAccepted(run, "replies written a byte per segment"));
  },
};

const linesInOneWrite: ClientCheck = {
  id: "wire.ndjson/lines-in-one-write",
  rules: ["wire.ndjson"],
  description:
    "A session: auth (where the client authorizes) answered, then the request's valid result and, " +
    "in the same write, 200 more lines (error replies with the same id), crossing common read buffer sizes.",
  note:
    "Lines are processed in connection order: the reply is the first line after the request. " +
    "A client may refuse the unsolicited lines after it; taking one of them as its reply is the fault.",
  async run(ctx) {
    const run = await ctx.runCase(
      session(ctx, (seen) => {
        const extra = errorLine(ctx.contract, seen, "error.invalid-request", "not the reply: a later line");
        return { bytes: Buffer.concat([line(validResult(seen)), ...Array(200).fill(extra)]), after: "hold" };
      }),
    );
    const blocked = notConnected(run);
    if (blocked) return blocked;
    if (run.killed || run.reported === "remote-error")
      return expectAccepted(run, "its reply followed by 200 unsolicited error lines in one write");
    if (run.outcome === "result" || run.outcome === "accepted")
      return { verdict: "pass", message: "took the first line of a write of 201 lines as its reply" };
    if (!run.reported) return { verdict: "skip", message: NEEDS_OUTCOME, reasonKind: "not-observable" };
    return { verdict: "pass", message: "refused the unsolicited lines after its reply" };
  },
};

const followPages: ClientCheck = {
  id: "method.events/follow-pages",
  rules: ["method.events"],
  description:
    "A session for a client that reads events: a history of three pages at the client's limit beyond its cursor, " +
    "which grows by one event at every poll (a queue draining slowly); each page is what a bridge returns.",
  note:
    "The cursor is exclusive: a client that follows the pages asks each from the last seq of the page before, " +
    "losing none and reading none twice. A client that reads one page only leaves this unobserved (skip).",
  async run(ctx) {
    const pages: { afterSeq: number; last: number }[] = [];
    let latest: number | undefined;
    const run = await ctx.runCase(
      session(ctx, (seen) => {
        if (methodOf(seen) !== "events") return { bytes: line(validResult(seen)), after: "hold" };
        const params = (seen.request?.params ?? {}) as { afterSeq?: unknown; limit?: unknown };
        const afterSeq = Number.isInteger(params.afterSeq) ? (params.afterSeq as number) : 0;
        const asked = Number.isInteger(params.limit) ? (params.limit as number) : ctx.contract.limits.eventsLimitMax;
        const limit = Math.min(Math.max(asked, ctx.contract.limits.eventsLimitMin), ctx.contract.limits.eventsLimitMax);
        latest = latest === undefined ? afterSeq + 2 * limit + 1 : latest + 1;
        const last = Math.max(afterSeq, Math.min(afterSeq + limit, latest));
        pages.push({ afterSeq, last });
        const events = Array.from({ length: last - afterSeq }, (_, i) => ({
          seq: afterSeq + 1 + i,
          event: { type: "command_completed", commandSeq: afterSeq + 1 + i, success: true, message: "drained" },
        }));
        const result = { latestSeq: latest, events };
        return { bytes: line(encode({ jsonrpc: ctx.contract.jsonrpc, id: requestIdOf(seen), result })), after: "hold" };
      }),
    );
    const blocked = notConnected(run);
    if (blocked) return blocked;
    if (run.killed) return expectAccepted(run, `events pages (${pages.length} served)`);
    if (pages.length === 0)
      return { verdict: "skip", message: "the client command does not read events", reasonKind: "not-observable" };
    if (pages.length === 1)
      return {
        verdict: "skip",
        message: "the client read one page of events and did not ask for the next, so paging is not observable",
        reasonKind: "not-observable",
      };
    for (let i = 1; i < pages.length; i++) {
      const { last } = pages[i - 1]!;
      const { afterSeq } = pages[i]!;
      if (afterSeq === last) continue;
      return {
        verdict: "fail",
        message:
          `After a page ending at seq ${last}, the client asked for page ${i + 1} after seq ${afterSeq}: ` +
          (afterSeq > last ? `${seqs(last + 1, afterSeq)} lost.` : `${seqs(afterSeq + 1, last)} read twice.`),
        expected: `afterSeq ${last}: the cursor is exclusive, the next page starts after the last seq read`,
        actual: `afterSeq ${afterSeq}; ${describeRun(run)}`,
        transcript: run.transcript,
        rules: ["method.events"],
      };
    }
    return {
      verdict: "pass",
      message: `followed ${pages.length} pages, each from the last seq of the page before, up to seq ${pages.at(-1)!.last}`,
    };
  },
};

const seqs = (from: number, to: number) => (from === to ? `event ${from}` : `events ${from}..${to}`);

/** Whether the client gave up near the timeout it was given. */
const late = (timeoutMs: number, run: CaseRun) => run.elapsedMs >= timeoutMs * 0.8;

/** A client that gave up near its timeout may have been starved of the bytes: a failure that rests on time. */
function timedIfLate(timeoutMs: number, run: CaseRun, finding: Finding): Finding {
  return finding.verdict === "fail" && late(timeoutMs, run) ? { ...finding, timed: true } : finding;
}

export const checks: ClientCheck[] = [
  closedMidReply,
  reconnectAuth,
  queueFull,
  byteByByte,
  linesInOneWrite,
  followPages,
];
