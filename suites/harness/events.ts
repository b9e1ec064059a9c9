import { type CheckContext, describeReply, resultOf, rpc, violation } from "./check.js";
import { type Connection, sleep } from "./connection.js";

export interface Completion {
  seq: number;
  commandSeq: unknown;
  success: unknown;
  message: unknown;
  event: Record<string, unknown>;
}

export interface EventsResult {
  latestSeq: number;
  events: { seq: number; event: Record<string, unknown> }[];
}

/** Reads events after a cursor, judging the events rule on the way. */
export async function readEvents(
  ctx: CheckContext,
  conn: Connection,
  afterSeq: number,
  limit = 500,
): Promise<EventsResult> {
  const reply = await ctx.call(conn, rpc("events", { afterSeq, limit }, `events-${afterSeq}`));
  return judgeEvents(resultOf(reply), afterSeq, describeReply(reply));
}

/** An events result: integer latestSeq, {seq, event} entries with seqs after the cursor, ascending, none past latestSeq. */
export function judgeEvents(
  result: Record<string, unknown> | undefined,
  afterSeq: number,
  shown: string,
): EventsResult {
  const broken = (message: string, expected: string) => violation("method.events", message, expected, shown);
  if (!result) throw broken("events did not return a result object.", "{latestSeq, events: [{seq, event}]}");
  if (!Number.isSafeInteger(result.latestSeq))
    throw broken("events returned no integer latestSeq.", "latestSeq: integer, present even when nothing is newer");
  if (!Array.isArray(result.events)) throw broken("events returned no events array.", "events: [{seq, event}]");
  let previous = afterSeq;
  for (const e of result.events as unknown[]) {
    const entry = e as { seq?: unknown; event?: unknown };
    if (
      typeof e !== "object" ||
      e === null ||
      !Number.isSafeInteger(entry.seq) ||
      typeof entry.event !== "object" ||
      entry.event === null ||
      Array.isArray(entry.event)
    ) {
      throw broken("An event entry is not {seq: integer, event: object}.", "{seq: integer, event: object}");
    }
    if ((entry.seq as number) <= previous) {
      throw broken(
        previous === afterSeq
          ? `events after ${afterSeq} returned seq ${entry.seq} (the cursor is exclusive).`
          : "events are not in ascending seq order.",
        `every seq > ${afterSeq}, ascending`,
      );
    }
    previous = entry.seq as number;
  }
  if (previous > (result.latestSeq as number))
    throw broken(
      `latestSeq ${result.latestSeq} is below a returned seq ${previous}.`,
      "latestSeq >= every returned seq",
    );
  return result as unknown as EventsResult;
}

/** The newest event seq now: the cursor to read completions after. */
export async function latestSeq(ctx: CheckContext, conn: Connection): Promise<number> {
  const reply = await ctx.call(conn, rpc("events", { afterSeq: 0, limit: 1 }, "cursor"));
  const latest = resultOf(reply)?.latestSeq;
  if (!Number.isSafeInteger(latest))
    throw violation(
      "method.events",
      "events returned no integer latestSeq.",
      "latestSeq: integer",
      describeReply(reply),
    );
  return latest as number;
}

/**
 * Polls events until every command in `waiting` has completed, or `waitMs` passes with no
 * new completion (a slow but working game loop keeps the wait going).
 * Returns all completions seen, by commandSeq (a list, so duplicates show).
 */
export async function collectCompletions(
  ctx: CheckContext,
  conn: Connection,
  cursor: number,
  waiting: Set<number>,
  waitMs = ctx.timeoutMs * 2,
): Promise<Map<number, Completion[]>> {
  const seen = new Map<number, Completion[]>();
  let until = Date.now() + waitMs;
  let extraPoll = true;
  for (;;) {
    const { events } = await readEvents(ctx, conn, cursor);
    for (const { seq, event } of events) {
      cursor = seq;
      if (event.type !== "command_completed") continue;
      const completion: Completion = {
        seq,
        commandSeq: event.commandSeq,
        success: event.success,
        message: event.message,
        event,
      };
      const key = Number(event.commandSeq);
      seen.set(key, [...(seen.get(key) ?? []), completion]);
      until = Date.now() + waitMs;
    }
    const missing = [...waiting].some((s) => !seen.has(s));
    if (!missing) {
      // One more read, so a duplicate completion right behind the first one shows.
      if (!extraPoll) return seen;
      extraPoll = false;
      await sleep(20);
      continue;
    }
    if (Date.now() >= until) return seen;
    if (events.length === 0) await sleep(15);
  }
}
