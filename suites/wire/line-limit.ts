import { FILLER, LIMIT_ID, type LimitLine, limitLine, limitLineBytes } from "../../generators/limitLine.js";
import {
  type OversizedLine,
  oversizedBytes,
  oversizedLine,
  paddedRequest,
  TAIL_ID,
} from "../../generators/oversizedLine.js";
import { contract as shipped } from "../../protocol/contract.js";
import { type Check, describeReply, errorCode, fail, pass, type Reply, rpc } from "../harness/check.js";
import { classesFirst } from "../harness/classes.js";
import type { Connection } from "../harness/connection.js";
import { expectPong, judgedBy, rejectedOrClosed, rejectedOrClosedOracle } from "../harness/expect.js";

export const exactLimit: Check = {
  id: "wire.line-limit/exact-limit",
  rules: ["wire.line-limit"],
  description: `Sends a ping padded with JSON whitespace to exactly the line limit (${shipped.limits.maxLineBytes} bytes) before the LF.`,
  note: "a payload of exactly the limit is legal and must be served",
  async run(ctx) {
    const conn = await ctx.session();
    const max = ctx.contract.limits.maxLineBytes;
    const bytes = Buffer.concat([paddedRequest(max), Buffer.from("\n")]);
    const reply = await ctx.call(conn, bytes, { expectId: "padded" });
    return expectPong(reply, `a request of exactly ${max} bytes`, "wire.line-limit");
  },
};

export const overLimit: Check = {
  id: "wire.line-limit/over-limit",
  rules: ["wire.line-limit", "error.invalid-request"],
  description:
    "Sends lines k bytes over the line limit (k from 1 up), padded so size is the only fault, some with a complete request after the limit; then checks the bridge still serves.",
  note: "the bytes after the limit are never run as a request",
  run: (ctx) =>
    ctx.property(
      oversizedLine(),
      async (line) => {
        const conn = await ctx.session();
        await conn.write(oversizedBytes(line, ctx.contract.limits.maxLineBytes));
        const first = await conn.read(ctx.timeoutMs);
        // A bridge that cut the line at the limit would answer the tail with the tail's own id.
        const later = line.tail && first.kind === "line" ? await linesBeforeMarker(conn, ctx.timeoutMs) : [];
        if ([first.kind === "line" ? first.bytes : undefined, ...later].some((b) => b?.includes(TAIL_ID))) {
          return judgedBy(
            { kind: "never", id: TAIL_ID },
            fail(
              "The bridge ran the request that followed the limit inside an oversized line.",
              "the whole oversized line rejected",
              `a response with id "${TAIL_ID}"`,
              // Where a line ends is framing: its rejection's code was not judged.
              ["wire.line-limit"],
            ),
          );
        }
        if (first.kind === "closed" || first.kind === "reset") return pass("closed");
        // A bridge without a limit answers the padded ping with its own id: judged below as not rejecting it.
        const reply: Reply =
          first.kind === "line"
            ? { kind: "response", response: ctx.judge(first.bytes, line.tail ? null : "oversized"), raw: first.bytes }
            : first;
        const invalid = ctx.contract.codes["error.invalid-request"];
        if (errorCode(reply) === invalid) return pass("rejected");
        return judgedBy(
          rejectedOrClosedOracle(invalid),
          fail(
            `A line ${line.excess} bytes over the limit was not rejected.`,
            `${invalid} with id null, and/or the connection closed`,
            describeReply(reply),
          ),
        );
      },
      {
        // One byte over (the first size past the legal one), a request after the limit, and far over.
        ...classesFirst<OversizedLine>(
          [
            { excess: 1, tail: false },
            { excess: 1, tail: true },
            { excess: 65_536, tail: false },
          ],
          ctx.runs - 3,
        ),
        liveness: true,
      },
    ),
};

const MARKER_ID = "after-oversized-line";

/**
 * The lines that arrive before the answer to a ping sent now. Lines are answered in connection
 * order, so whatever the bridge made of the bytes already sent comes first, and the marker's
 * reply ends the wait as soon as it arrives, with no quiet period to sit out.
 */
async function linesBeforeMarker(conn: Connection, timeoutMs: number): Promise<Buffer[]> {
  const lines: Buffer[] = [];
  if (!(await conn.write(`${JSON.stringify(rpc("ping", {}, MARKER_ID))}\n`))) return lines;
  const end = Date.now() + timeoutMs;
  for (;;) {
    const next = await conn.read(Math.max(1, end - Date.now()));
    if (next.kind !== "line" || next.bytes.includes(MARKER_ID)) return lines;
    lines.push(next.bytes);
  }
}

export const endlessLine: Check = {
  id: "wire.line-limit/endless-line",
  rules: ["wire.line-limit"],
  description: "Streams 8 times the line limit with no LF, 64 KiB at a time, then waits for the bridge's answer.",
  note: "an endless line is rejected without buffering the rest",
  async run(ctx) {
    const conn = await ctx.session();
    const chunk = Buffer.alloc(65_536, 0x61);
    for (let sent = 0; sent < 8 * ctx.contract.limits.maxLineBytes && !conn.closed; sent += chunk.length) {
      if (!(await conn.write(chunk))) break;
    }
    const reply = await ctx.read(conn);
    const invalid = ctx.contract.codes["error.invalid-request"];
    const rejected = rejectedOrClosed(reply, invalid);
    if (!rejected && reply.kind === "timeout") {
      return judgedBy(
        rejectedOrClosedOracle(invalid),
        fail(
          `8 times the limit without an LF drew neither ${invalid} nor a close:` +
            " the bridge is buffering without bound or has stopped reading.",
          `${invalid} (id null), or the connection closed`,
          describeReply(reply),
        ),
      );
    }
    if (!rejected)
      return judgedBy(
        rejectedOrClosedOracle(invalid),
        fail(
          `An endless line was answered with something other than ${invalid}.`,
          `${invalid} (id null) or close`,
          describeReply(reply),
        ),
      );
    if (!(await ctx.alive()))
      return judgedBy(
        { kind: "alive" },
        fail(
          "After an endless line the bridge stopped answering ping on a fresh connection.",
          "the bridge keeps serving",
          "no answer to ping",
        ),
      );
    return pass("The endless line was rejected and the bridge still serves.");
  },
};

/** Every width at exactly the limit and one byte over, then an excess of whitespace only: tried first. */
const LIMIT_EXAMPLES: LimitLine[] = [
  ...([1, 2, 3, 4] as const).flatMap((width) => [
    { width, excess: 0, padding: "chars" as const },
    { width, excess: 1, padding: "chars" as const },
  ]),
  { width: 3, excess: 1, padding: "spaces" },
  { width: 2, excess: 1, padding: "cr" },
  { width: 4, excess: 0, padding: "cr" },
];

export const bytesNotCharacters: Check = {
  id: "wire.line-limit/bytes-not-characters",
  rules: ["wire.line-limit"],
  description:
    "Sends pings whose string is filled with 1-, 2-, 3- or 4-byte UTF-8 characters to exactly the line limit before the LF, or a few bytes over it (some over only by trailing spaces, or by a CR before the LF).",
  note: "the limit counts the payload's UTF-8 bytes, whitespace and a CR before the LF included, not characters or UTF-16 units",
  run: (ctx) =>
    ctx.property(
      limitLine(),
      async (line) => {
        const max = ctx.contract.limits.maxLineBytes;
        const bytes = limitLineBytes(line, max);
        const size = bytes.length - 1;
        const what = `a ${size}-byte line of ${line.width}-byte characters (${JSON.stringify(FILLER[line.width])})`;
        const conn = await ctx.session();
        const reply = await ctx.call(conn, bytes, { expectId: LIMIT_ID });
        if (line.excess === 0) return expectPong(reply, `${what}, exactly the limit`, "wire.line-limit");
        const invalid = ctx.contract.codes["error.invalid-request"];
        if (rejectedOrClosed(reply, invalid)) return pass("rejected");
        const rest = line.padding === "cr" ? "whitespace ending in a CR" : "spaces";
        const excess = line.padding === "chars" ? "" : ` (the JSON text ends at the limit; the rest is ${rest})`;
        return judgedBy(
          rejectedOrClosedOracle(invalid),
          fail(
            `${what}, ${line.excess} over the limit${excess}, was not rejected: the limit is in bytes.`,
            `${invalid} with id null, and/or the connection closed`,
            describeReply(reply),
          ),
        );
      },
      { examples: LIMIT_EXAMPLES, runs: LIMIT_EXAMPLES.length + 3, liveness: true },
    ),
};

/** Long enough for the payload to reach the bridge as a read of its own before the LF follows. */
const LF_PAUSE_MS = 25;

export const lateLineFeed: Check = {
  id: "wire.line-limit/late-lf",
  rules: ["wire.line-limit"],
  description: "Sends a ping padded to exactly the line limit, pauses, then sends its LF in a separate write.",
  note: "a payload of exactly the limit is legal however it is cut: a full buffer still waiting for its LF is not oversized",
  async run(ctx) {
    const conn = await ctx.session();
    const max = ctx.contract.limits.maxLineBytes;
    const bytes = Buffer.concat([paddedRequest(max, "late-lf"), Buffer.from("\n")]);
    const reply = await ctx.call(conn, bytes, { expectId: "late-lf", splitAt: [max], delayMs: LF_PAUSE_MS });
    return expectPong(reply, "a request of exactly the limit whose LF came later", "wire.line-limit");
  },
};

export const checks: Check[] = [exactLimit, lateLineFeed, bytesNotCharacters, overLimit, endlessLine];
