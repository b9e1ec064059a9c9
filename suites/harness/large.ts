// The large completions method.events/large-messages makes, and its read of every page after them,
// each reply line measured.
import { type CheckContext, describeReply, type Finding, fail, resultOf, rpc, skip } from "./check.js";
import type { Connection } from "./connection.js";
import { collectCompletions, judgeEvents, latestSeq, pollId } from "./events.js";
import { judgedBy } from "./expect.js";
import { act, judgeCompletion, makeEvents } from "./lifecycle.js";

/** Bytes a request stays under the line limit by, so its own size is never the question. */
const REQUEST_MARGIN = 64;

/**
 * The stringArg for `count` large completions. Two texts of over half a line each, where the history
 * holds two: echoed, one page of both is over the limit. Where it holds one, one text just under the
 * request limit: its echo, in a reply with more around it, is over on its own.
 */
export function largeText(ctx: CheckContext, type: string, count: number): string {
  const { maxLineBytes } = ctx.contract.limits;
  const overhead = Buffer.byteLength(JSON.stringify(rpc("act", { type, stringArg: "" }, "large-0")));
  const size = count === 2 ? Math.ceil(maxLineBytes * 0.55) : maxLineBytes - overhead - REQUEST_MARGIN;
  return "large completion message ".repeat(Math.ceil(maxLineBytes / 25)).slice(0, size);
}

/**
 * Acts `count` times with `text`, one at a time, each followed to its completion: a full queue is never
 * retried with a request this large. Every reply line is measured as it is read: one over the limit fails
 * wire.line-limit. Returns the completions' findings, or the skip when one was not accepted.
 */
export async function makeLargeCompletions(
  ctx: CheckContext,
  conn: Connection,
  type: string,
  text: string,
  count: number,
): Promise<{ findings: Finding[]; notes: string } | Finding> {
  const findings: Finding[] = [];
  let notes = "";
  for (let i = 0; i < count; i++) {
    const cursor = await latestSeq(ctx, conn);
    const reply = await act(ctx, conn, { type, stringArg: text }, `large-${i}`);
    const seq = resultOf(reply)?.commandSeq;
    if (!Number.isSafeInteger(seq))
      return skip(
        `act ${type} with a stringArg of ${text.length} bytes was not accepted (${describeReply(reply)}), so ` +
          `no large completion could be made.`,
      );
    const done = await collectCompletions(ctx, conn, cursor, new Set([seq as number]));
    notes += done.note;
    const broken = judgeCompletion(
      done.get(seq as number),
      seq as number,
      { type, stringArg: `<${text.length} bytes>` },
      ["integration.command-completion"],
    );
    if (broken) findings.push(judgedBy({ kind: "completes", acts: [`large-${i}`], after: "cursor" }, broken));
  }
  return { findings, notes };
}

/**
 * A bridge that pages these events over the line limit would do so to every later reader of its
 * history: the large completions go once judged, so that no later check (nor a later run) fails for
 * what this one left behind. A bridge this tool owns is started afresh (one start, not a history
 * filled at the game's pace); a running one has them pushed out by as many small ones as it holds.
 */
export async function clearLargeCompletions(ctx: CheckContext, finding: Finding): Promise<void> {
  if (finding.verdict !== "fail" || !finding.rules?.includes("wire.line-limit")) return;
  if (await ctx.fresh()) return;
  const maxEvents = resultOf(await ctx.call(await ctx.session(), rpc("status", {}, "status")))?.maxEvents;
  if (Number.isSafeInteger(maxEvents)) await makeEvents(ctx, maxEvents as number);
}

/**
 * Every page after `before` with limit `max` and a long id: the largest reply line and the page count,
 * or the finding that a page came back empty while newer events were retained.
 */
export async function pageThrough(
  ctx: CheckContext,
  conn: Connection,
  before: number,
  max: number,
): Promise<{ largest: number; pages: number } | Finding> {
  // A long id makes the reply longer still, as any client's id may.
  const id = `large-page-${"p".repeat(256)}`;
  let cursor = before;
  let largest = 0;
  let pages = 0;
  for (let read = 0; read < 1000; read++) {
    const reply = await ctx.call(conn, rpc("events", { afterSeq: cursor, limit: max }, pollId(conn, id)));
    const page = judgeEvents(resultOf(reply), cursor, describeReply(reply));
    if (reply.kind === "response") largest = Math.max(largest, reply.raw.length);
    if (!page.events.length) {
      if (page.latestSeq > cursor)
        return judgedBy(
          {
            kind: "result",
            expect: [
              {
                anyOf: [
                  [{ path: ["result", "events", "#"], op: ">", than: { value: 0 } }],
                  [{ path: ["result", "latestSeq"], op: "<=", than: { value: cursor } }],
                ],
              },
            ],
          },
          fail(
            `events after ${cursor} returned no events though latestSeq is ${page.latestSeq}: a client paging ` +
              `with the cursor can go no further.`,
            "at least one event per page while newer ones are retained (fewer per page where a full page would " +
              "not fit in one line)",
            describeReply(reply),
            ["method.events"],
          ),
        );
      break;
    }
    cursor = page.events[page.events.length - 1]!.seq;
    pages++;
  }
  return { largest, pages };
}
