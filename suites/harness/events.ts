import { setImmediate as nextTurn } from "node:timers/promises";
import type { Oracle } from "../../protocol/verdict.js";
import { type CheckContext, describeReply, resultOf, rpc, violation } from "./check.js";
import { type Connection, sleep } from "./connection.js";
import { machine } from "./machine.js";

export interface Completion {
  seq: number;
  commandSeq: unknown;
  success: unknown;
  message: unknown;
  event: Record<string, unknown>;
  /**
   * Set on a placeholder, not a completion read off the wire: the command's completion may have
   * left the bounded history before it could be read (see Completions.mayBeEvicted).
   */
  evicted?: true;
}

export interface EventsResult {
  latestSeq: number;
  events: { seq: number; event: Record<string, unknown> }[];
}

/**
 * Completions by commandSeq (a list each, so duplicates show), and what the reader could not see.
 *
 * The history is bounded by maxEvents: with a small one, completions can be dropped before a
 * reader following the stream gets to them. Such a drop shows as a gap, events after the cursor
 * starting above cursor + 1. A waited-for command whose completion was not read, when no more
 * were missing than events fell into gaps, may have completed unseen: it is listed with one
 * placeholder (`evicted: true`), so `has()` does not call it lost and judgeCompletion does not
 * judge it. Where more are missing than fell out, they stay absent: some certainly never completed.
 */
export class Completions extends Map<number, Completion[]> {
  /** Event seqs that fell into gaps: dropped from the history before this reader saw them. */
  unseen = 0;
  /** Waited-for commands whose completion was not read but may have been among the unseen. */
  readonly mayBeEvicted = new Set<number>();

  /** What could not be observed, for a finding's message; empty when everything was. */
  get note(): string {
    if (!this.mayBeEvicted.size) return "";
    return (
      ` (${this.mayBeEvicted.size} completion(s) not judged: ${this.unseen} event(s) left the bounded history ` +
      "before they could be read)"
    );
  }
}

/** Reads events after a cursor, judging the events rule on the way. */
const polls = new WeakMap<Connection, number>();

/**
 * An id for one read of a poll, new on its connection: a poll that repeated one id would meet a bridge's handling of
 * a repeated id (a retry cache), which the deep session's same-id steps judge, where it means to read the state.
 */
export function pollId(conn: Connection, prefix: string): string {
  const n = (polls.get(conn) ?? 0) + 1;
  polls.set(conn, n);
  return `${prefix}-${n}`;
}

export async function readEvents(
  ctx: CheckContext,
  conn: Connection,
  afterSeq: number,
  limit = ctx.contract.limits.eventsLimitMax,
  id: unknown = `events-${afterSeq}`,
): Promise<EventsResult> {
  const reply = await ctx.call(conn, rpc("events", { afterSeq, limit }, id));
  return judgeEvents(resultOf(reply), afterSeq, describeReply(reply));
}

/**
 * An events result: integer latestSeq, {seq, event} entries with seqs after the cursor, ascending,
 * none past latestSeq.
 */
export function judgeEvents(
  result: Record<string, unknown> | undefined,
  afterSeq: number,
  shown: string,
): EventsResult {
  // A page that held events is asked for again until it does: a replay may come before the bridge made them.
  const polled = Array.isArray(result?.events) && result.events.length > 0;
  const oracle: Oracle = {
    ...eventsPageOracle(afterSeq),
    ...(polled ? { until: [{ path: ["result", "events", "#"], op: ">", than: { value: 0 } }] } : {}),
  };
  const broken = (message: string, expected: string) => violation("method.events", message, expected, shown, oracle);
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
  // Only a returned seq is held against latestSeq: a cursor past it is legal and reads nothing.
  if (result.events.length && previous > (result.latestSeq as number))
    throw broken(
      `latestSeq ${result.latestSeq} is below a returned seq ${previous}.`,
      "latestSeq >= every returned seq",
    );
  return result as unknown as EventsResult;
}

/** What judgeEvents holds an events page to, as an oracle. */
export const eventsPageOracle = (afterSeq: number): Oracle => ({
  kind: "result",
  expect: [
    { path: ["result", "latestSeq"], is: "integer" },
    { path: ["result", "events"], is: "array" },
    {
      path: ["result", "events"],
      every: [
        { path: ["seq"], is: "integer" },
        { path: ["event"], is: "object" },
        { path: ["seq"], op: ">", than: { value: afterSeq } },
      ],
    },
    { path: ["result", "events"], ascending: ["seq"] },
    {
      anyOf: [
        [{ path: ["result", "events", "#"], equals: 0 }],
        [{ path: ["result", "latestSeq"], op: ">=", than: { here: ["result", "events", -1, "seq"] } }],
      ],
    },
  ],
});

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
      { kind: "result", expect: [{ path: ["result", "latestSeq"], is: "integer" }] },
    );
  return latest as number;
}

/**
 * Pauses between polls: the first only to the next turn of the event loop, then doubling up to
 * `capMs`, never past `until`. reset() after progress, so a stream that flows is read at once.
 */
export class Backoff {
  private next = 0;
  constructor(private readonly capMs = 16) {}

  reset(): void {
    this.next = 0;
  }

  /** Pauses, and says for how long it meant to. */
  async wait(until = Number.POSITIVE_INFINITY): Promise<number> {
    const ms = Math.min(this.next, Math.max(0, until - Date.now()));
    this.next = Math.min(Math.max(1, this.next * 2), this.capMs);
    if (ms < 1) await nextTurn();
    else await sleep(ms);
    return Math.max(0, ms);
  }
}

/** A turn of the wait this much longer than planned was a stall, not time the game loop had. */
const STALL_MS = 100;

/** Longest extra look for a duplicate completion once every awaited one has arrived. */
const DUPLICATE_GRACE_MS = 20;

export interface FollowOptions {
  /** How long to wait with no new completion (default: what the run's pace says, see CommandLedger). */
  waitMs?: number;
  /** Events the caller, reading up to `cursor`, already saw fall into gaps (counted in `unseen`). */
  unseenBefore?: number;
  /**
   * Once every awaited command has completed, acts one more command and returns its commandSeq (undefined where it
   * was not accepted): the look for a duplicate then lasts until the game loop completes it, one step of the loop,
   * rather than a guess of one. Its completion is in the result, not judged. Where the bridge keeps a history for the
   * checks after, it also makes one more event of it in the time the look would have taken anyway.
   */
  step?: () => Promise<number | undefined>;
}

/**
 * Follows the events stream from `cursor` until every command in `waiting` has completed, or
 * `waitMs` passes with no new completion (a slow but working game loop keeps the wait going).
 * Notices completions dropped from a small history before they could be read (see Completions)
 * and then stops as soon as the bridge's queue is empty, rather than waiting for what cannot come.
 */
export async function collectCompletions(
  ctx: CheckContext,
  conn: Connection,
  cursor: number,
  waiting: Set<number>,
  options: FollowOptions = {},
): Promise<Completions> {
  const started = Date.now();
  try {
    return await follow(ctx, conn, cursor, new Set(waiting), {
      waitMs: ctx.ledger?.completionWaitMs(ctx.timeoutMs) ?? ctx.timeoutMs * 2,
      ...options,
    });
  } finally {
    ctx.waitedMs += Date.now() - started;
    if (ctx.ledger) ctx.ledger.waitedMs += Date.now() - started;
  }
}

async function follow(
  ctx: CheckContext,
  conn: Connection,
  cursor: number,
  waiting: Set<number>,
  { waitMs = ctx.timeoutMs * 2, unseenBefore = 0, step }: FollowOptions,
): Promise<Completions> {
  const seen = new Completions();
  const from = cursor;
  /** Events returned after `from`: fewer than latestSeq says were recorded, and some were not shown. */
  let returned = 0;
  seen.unseen = unseenBefore;
  const pause = new Backoff();
  const pageMax = ctx.contract.limits.eventsLimitMax;
  let until = Date.now() + waitMs;
  let lastArrival = Date.now();
  /** What this machine had lost at lastArrival: time it then lost waiting for a CPU is no step of the game loop. */
  let arrivalMark = machine.mark();
  let pace = 0;
  let settleUntil: number | undefined;
  /** Whether the marked step was asked for, and whether the bridge accepted its command. */
  let stepped = false;
  let marked = false;
  let drained = false;
  /**
   * How much the wait for the next completion was lengthened for moments neither side could run (never past the
   * wait before the pace is known), and how much of that since the last awaited completion (not the game loop's).
   */
  let stalledMs = 0;
  let stalledSinceArrival = 0;
  const mostStalledMs = Math.max(0, ctx.timeoutMs * 2 - waitMs);
  let turnStarted = Date.now();
  let planned = 0;
  for (;;) {
    const page = await readEvents(ctx, conn, cursor, pageMax, pollId(conn, "completions"));
    // A turn (a pause and a read) far longer than planned is a moment this machine or the bridge did not run
    // at all (a loaded machine, a collector's pause): not time the game loop had to complete the command.
    const over = Date.now() - turnStarted - planned;
    if (over > STALL_MS) {
      const added = Math.max(0, Math.min(over, mostStalledMs - stalledMs));
      stalledMs += added;
      stalledSinceArrival += over;
      until += added;
    }
    turnStarted = Date.now();
    planned = 0;
    const { events } = page;
    if (events.length && events[0]!.seq > cursor + 1) seen.unseen += events[0]!.seq - cursor - 1;
    for (const { seq, event } of events) {
      cursor = seq;
      returned++;
      if (event.type !== "command_completed") continue;
      const key = Number(event.commandSeq);
      // A command completing again is no sign the loop moved on: only a first completion keeps the wait going.
      if (!recordCompletion(seen, key, seq, event)) continue;
      if (waiting.has(key)) {
        // A stall is the machine's, not a step of the game loop: it does not slow the pace every later wait follows.
        pace = Math.max(0, Date.now() - lastArrival - Math.max(stalledSinceArrival, machine.since(arrivalMark)));
        lastArrival = Date.now();
        arrivalMark = machine.mark();
        stalledSinceArrival = 0;
        ctx.ledger?.step(pace);
      }
      until = Date.now() + waitMs;
      stalledMs = 0;
    }
    if (events.length) pause.reset();
    const missing = [...waiting].filter((s) => !seen.has(s));
    if (!missing.length && step && !stepped) {
      // One step of the game loop, marked by a command of its own: a duplicate shows by the time it completes.
      stepped = true;
      const marker = await step();
      if (marker !== undefined) {
        marked = true;
        waiting.add(marker);
        // The loop's step is timed from the marker's acceptance, not from before its round trip.
        lastArrival = Date.now();
        arrivalMark = machine.mark();
        turnStarted = Date.now();
        stalledSinceArrival = 0;
        until = Date.now() + waitMs;
        continue;
      }
    }
    if (!missing.length) {
      // Keep reading for about one completion's time at the bridge's pace, so a duplicate shows; after a marked
      // step, one read more (a duplicate written in that step after the marker's completion).
      settleUntil ??= Date.now() + (marked ? 1 : Math.min(DUPLICATE_GRACE_MS, Math.max(1, pace)));
      if (Date.now() >= settleUntil) return seen;
    } else if (missing.length <= seen.unseen) {
      // All the missing may be among the dropped; once the queue is empty (and one more read
      // found nothing), no completion is still to come.
      if (drained && !events.length) return unobservable(seen, missing);
      drained = await queueEmpty(ctx, conn);
      if (drained) continue;
    }
    if (Date.now() >= until) return waitedOut(ctx, conn, seen, missing, { from, returned, waiting, page });
    // A page may stop short of latestSeq (a full page, or one kept within the line limit): read on at once.
    if (!events.length || cursor >= page.latestSeq) planned = await pause.wait(settleUntil ?? until);
  }
}

/** Records a completion of command `key` at `seq` in `seen`: whether it is the command's first. */
function recordCompletion(seen: Completions, key: number, seq: number, event: EventsResult["events"][number]["event"]) {
  const earlier = seen.get(key);
  seen.set(key, [
    ...(earlier ?? []),
    { seq, commandSeq: event.commandSeq, success: event.success, message: event.message, event },
  ]);
  return !earlier;
}

/**
 * The wait ended with `missing` not read: unobservable where they may be among the dropped, otherwise
 * what was seen, after judging the events method where it returned fewer events than latestSeq says.
 */
async function waitedOut(
  ctx: CheckContext,
  conn: Connection,
  seen: Completions,
  missing: number[],
  { from, returned, waiting, page }: { from: number; returned: number; waiting: Set<number>; page: EventsResult },
): Promise<Completions> {
  if (missing.length <= seen.unseen) return unobservable(seen, missing);
  // Every event up to latestSeq was returned: the completions are not there to read.
  if (returned < page.latestSeq - from) await unreadable(ctx, conn, from, waiting.size, missing, page.latestSeq);
  return seen;
}

/** Opens the violation of completions that happened but that events did not return. */
export const UNREADABLE = "Commands completed";

/**
 * Waited-for completions that events never returned, although the commands left the queue and the
 * history grew by at least as many events: they completed, and the events method did not show
 * them (a cursor read as something else, pages that skip). That is the events method's fault,
 * not a command that never completed.
 */
async function unreadable(
  ctx: CheckContext,
  conn: Connection,
  from: number,
  waited: number,
  missing: number[],
  latest: number,
): Promise<void> {
  if (latest - from < waited || !(await queueEmpty(ctx, conn))) return;
  throw violation(
    "method.events",
    `${UNREADABLE} (the queue emptied and latestSeq went from ${from} to ${latest}), but events after ${from} never returned the completion of commandSeq ${missing.slice(0, 10).join(", ")}.`,
    "every command_completed event after the cursor, by its seq",
    `${missing.length} of ${waited} completion(s) not returned`,
  );
}

function unobservable(seen: Completions, missing: number[]): Completions {
  for (const s of missing) {
    seen.mayBeEvicted.add(s);
    seen.set(s, [{ seq: Number.NaN, commandSeq: s, success: undefined, message: undefined, event: {}, evicted: true }]);
  }
  return seen;
}

/** Whether status says no command is queued (a bridge that does not say is taken at its word: nothing to wait for). */
export async function queueEmpty(ctx: CheckContext, conn: Connection): Promise<boolean> {
  const queued = resultOf(await ctx.call(conn, rpc("status", {}, pollId(conn, "queue"))))?.queuedCommands;
  return typeof queued !== "number" || queued === 0;
}
