// Reading the event history page by page, and judging one page against all that is retained after
// its cursor: shared by the method.events checks.
import type { Oracle } from "../../protocol/verdict.js";
import { type CheckContext, describeReply, type Finding, fail, resultOf, rpc } from "./check.js";
import type { Connection } from "./connection.js";
import { type EventsResult, eventsPageOracle, judgeEvents, readEvents } from "./events.js";
import { judgedBy } from "./expect.js";

type Entry = EventsResult["events"][number];

/**
 * Every retained event after `afterSeq`, page by page with the largest limit; `changed` when the
 * history moved meanwhile.
 */
export async function readAll(
  ctx: CheckContext,
  conn: Connection,
  afterSeq: number,
): Promise<EventsResult & { changed: boolean }> {
  const max = ctx.contract.limits.eventsLimitMax;
  const first = await readEvents(ctx, conn, afterSeq, max, `all-${afterSeq}`);
  const events = [...first.events];
  let latest = first.latestSeq;
  // A bridge may return fewer than the limit to keep a line within the limit: page on up to latestSeq.
  for (let page = 0; page < 1000 && events.length && events[events.length - 1]!.seq < latest; page++) {
    const cursor = events[events.length - 1]!.seq;
    const next = await readEvents(ctx, conn, cursor, max, `all-${cursor}`);
    latest = next.latestSeq;
    if (!next.events.length) break;
    events.push(...next.events);
  }
  return { latestSeq: latest, events, changed: latest !== first.latestSeq };
}

/** Whether events after `cursor` were dropped from the history: the oldest retained one is above cursor + 1. */
export async function droppedAfter(ctx: CheckContext, conn: Connection, cursor: number): Promise<boolean> {
  const oldest = (await readEvents(ctx, conn, 0, ctx.contract.limits.eventsLimitMin, "oldest")).events[0];
  return oldest !== undefined && oldest.seq > cursor + 1;
}

const clampOf = (ctx: CheckContext, limit: number) =>
  Math.min(Math.max(limit, ctx.contract.limits.eventsLimitMin), ctx.contract.limits.eventsLimitMax);

/**
 * Whether a page of these entries surely fits in one reply line, however the bridge encodes it:
 * the most compact JSON, even with every character escaped (six bytes each), under the limit.
 */
function surelyFits(ctx: CheckContext, id: unknown, latest: number, entries: Entry[]): boolean {
  const line = JSON.stringify({ jsonrpc: ctx.contract.jsonrpc, id, result: { latestSeq: latest, events: entries } });
  return Buffer.byteLength(line) * 6 <= ctx.contract.limits.maxLineBytes;
}

export const seqsOf = (entries: Entry[]) => `[${entries.map((e) => e.seq).join(", ")}]`;

/**
 * A page read with `limit`, against every retained event after the same cursor (`retained`):
 * no more than the clamped limit, the first of the retained in order, and all the clamp allows
 * unless so many would not fit in one line (the line limit binds replies: fewer is then allowed).
 */
export function judgePage(
  ctx: CheckContext,
  page: EventsResult,
  retained: Entry[],
  /** The cursor readAll read `retained` after (its first request's id is all-<cursor>). */
  retainedAfter: number,
  limit: number,
  what: string,
  shown: string,
  id: unknown,
): Finding | undefined {
  const { eventsLimitMin: min, eventsLimitMax: max } = ctx.contract.limits;
  const clamped = clampOf(ctx, limit);
  const got = page.events;
  const count = ["result", "events", "#"];
  const events = ["result", "events"];
  // The retained events were read just before, by readAll: its first page is the reference.
  const oracle: Oracle = {
    kind: "result",
    expect: [
      { path: count, op: "<=", than: { value: clamped } },
      { path: events, prefixOf: { ref: `all-${retainedAfter}`, path: events }, by: ["seq"] },
      // What was due: the clamp, or as many as were retained; past one page, readAll paged on and counted them.
      retained.length >= max
        ? { path: count, op: ">=", than: { value: Math.min(clamped, retained.length) } }
        : {
            anyOf: [
              [{ path: count, op: ">=", than: { value: clamped } }],
              [{ path: count, op: ">=", than: { ref: `all-${retainedAfter}`, path: count } }],
            ],
          },
    ],
  };
  const judgedFail = (...args: Parameters<typeof fail>) => judgedBy(oracle, fail(...args));
  if (got.length > clamped)
    return judgedFail(
      `${what} returned ${got.length} events, more than the clamped limit.`,
      `at most ${clamped} (limit clamped to ${min}..${max})`,
      shown,
    );
  for (let i = 0; i < got.length; i++) {
    if (got[i]!.seq !== retained[i]?.seq)
      return judgedFail(
        `${what} did not return the first retained events after the cursor (a client paging with the cursor ` +
          `would skip events).`,
        `the first ${got.length} of the retained events after the cursor, ascending: seqs ` +
          `${seqsOf(retained.slice(0, got.length))}`,
        `seqs ${seqsOf(got)}`,
      );
  }
  const due = Math.min(clamped, retained.length);
  if (got.length < due && surelyFits(ctx, id, page.latestSeq, retained.slice(0, due)))
    return judgedFail(
      `${what} returned ${got.length} events where ${due} were due.`,
      `min(limit clamped to ${min}..${max}, ${retained.length} retained after the cursor) = ${due}`,
      shown,
    );
  return undefined;
}

/** events with `params`, judged: the result, or the finding that there was none. */
export async function eventsCall(
  ctx: CheckContext,
  conn: Connection,
  params: Record<string, unknown>,
  id: unknown,
): Promise<{ page: EventsResult; shown: string } | Finding> {
  const reply = await ctx.call(conn, rpc("events", params, id));
  const shown = describeReply(reply);
  const result = resultOf(reply);
  const afterSeq = typeof params.afterSeq === "number" ? params.afterSeq : 0;
  if (!result)
    return judgedBy(
      eventsPageOracle(afterSeq),
      fail(
        `events ${JSON.stringify(params)} was not answered with a result.`,
        "{latestSeq, events}: afterSeq and limit are any integers, and both may be left out",
        shown,
      ),
    );
  return { page: judgeEvents(result, afterSeq, shown), shown };
}

/** A failure whose case reads events made before it (outside the case, or left out of the report): a reproducer makes them first. */
export const needing = (finding: Finding, latestSeq: number): Finding =>
  finding.oracle ? { ...finding, oracle: { ...finding.oracle, needsEvents: latestSeq } } : finding;

export const CHANGING =
  "the event history kept changing while it was read (commands still queued by an earlier check or another " +
  "client), so the pages could not be compared";
