import type { Assertion, JsonPath } from "../../protocol/verdict.js";
import {
  type Check,
  type CheckContext,
  describeReply,
  errorCode,
  type Finding,
  fail,
  pass,
  type Reply,
  resultOf,
  rpc,
  skip,
} from "../harness/check.js";
import { type Connection, sleep } from "../harness/connection.js";
import { latestSeq, pollId, queueEmpty, readEvents } from "../harness/events.js";
import { ACCEPTED, judgedBy, statusLimit } from "../harness/expect.js";
import { SAMPLE_SHARE } from "../harness/history.js";
import { plainCompletes } from "../harness/plain.js";

// The bridge drains its queue concurrently with the tool, so the number of accepted commands not yet
// completed is never read directly: it is bracketed. Completion events read just before a request prove a
// lower count of completions (an upper bound on what is outstanding); the event seqs the history may
// still hide just after it prove an upper count (a lower bound). Event seqs are strictly increasing
// integers, so between the start and latestSeq there are at most latestSeq - start events: every slot
// not seen is counted as a completion that may have happened, which keeps the bound sound even when the
// history evicted events before the tool read them.

/** This check's commands and what the event history proves about how many are still outstanding. */
export class Ledger {
  /** commandSeqs of this check's accepted commands. */
  readonly accepted = new Set<number>();
  /** commandSeq -> seq of its completion event, for this check's completions seen so far. */
  readonly done = new Map<number, number>();
  /** Every event seq seen after the start. */
  readonly seen = new Set<number>();
  /** Completions of commands this check did not send: other traffic. */
  foreign = 0;
  cursor: number;
  latest: number;
  /** No request since the last poll: its bounds still hold. */
  private fresh = false;

  private constructor(
    private readonly ctx: CheckContext,
    readonly conn: Connection,
    readonly start: number,
  ) {
    this.cursor = start;
    this.latest = start;
  }

  static async open(ctx: CheckContext, conn: Connection): Promise<Ledger> {
    return new Ledger(ctx, conn, await latestSeq(ctx, conn));
  }

  /** Reads every event after the cursor; true when any was new. */
  async poll(): Promise<boolean> {
    const limit = this.ctx.contract.limits.eventsLimitMax;
    const before = this.seen.size;
    for (;;) {
      const page = await readEvents(this.ctx, this.conn, this.cursor, limit, pollId(this.conn, "ledger"));
      for (const { seq, event } of page.events) {
        this.seen.add(seq);
        this.cursor = seq;
        if (event.type !== "command_completed") continue;
        const commandSeq = event.commandSeq as number;
        if (!this.accepted.has(commandSeq)) this.foreign++;
        else if (!this.done.has(commandSeq)) this.done.set(commandSeq, seq); // a duplicate is command-completion's
      }
      this.latest = Math.max(this.latest, page.latestSeq);
      if (page.events.length < limit) break;
    }
    this.fresh = true;
    return this.seen.size > before;
  }

  /** Polls unless nothing was sent since the last poll. */
  async settle(): Promise<void> {
    if (!this.fresh) await this.poll();
  }

  /** Accepted commands not seen completed as of the last poll: before a request, at most this many are outstanding. */
  get atMost(): number {
    return this.accepted.size - this.done.size;
  }

  /**
   * Of `among` (commands accepted before a request), how many may still have been outstanding
   * when it was served, as of a poll after its reply: the fewest the queue can have held.
   */
  atLeast(among: Set<number>): number {
    const seenDone = [...this.done.keys()].filter((s) => among.has(s)).length;
    const unseen = Math.max(0, this.latest - this.start - this.seen.size);
    return among.size - Math.min(among.size, seenDone + unseen);
  }

  /** Sends `request`, judging what was outstanding when the bridge served it. */
  async send(request: object): Promise<{ reply: Reply; atMost: number; atLeast: number; commandSeq?: number }> {
    await this.settle();
    const among = new Set(this.accepted);
    const atMost = this.atMost;
    this.fresh = false;
    const reply = await this.ctx.call(this.conn, request);
    const seq = resultOf(reply)?.commandSeq;
    const commandSeq = Number.isSafeInteger(seq) && resultOf(reply)?.accepted === true ? (seq as number) : undefined;
    if (commandSeq !== undefined) this.accepted.add(commandSeq);
    await this.poll();
    return { reply, atMost, atLeast: this.atLeast(among), ...(commandSeq === undefined ? {} : { commandSeq }) };
  }

  /** Accepted commands whose completion was never seen. */
  get pending(): number[] {
    return [...this.accepted].filter((s) => !this.done.has(s));
  }

  /** Accepted commands that cannot have completed, even counting every event seq not seen as one of them. */
  get provablyLost(): number {
    return this.atLeast(this.accepted);
  }

  /**
   * Polls until every accepted command's completion was seen, or `waitMs` passes with no new event
   * (a slow but working game loop keeps the wait going). Completions a small history dropped before they
   * were read are not waited for: once each command not seen completed may be among them and the queue
   * is empty, none is still to come.
   */
  async drain(waitMs = this.ctx.timeoutMs * 2): Promise<void> {
    let until = Date.now() + waitMs;
    await this.settle();
    while (this.pending.length > 0 && Date.now() < until) {
      if (this.provablyLost === 0 && (await this.queueEmpty())) return;
      await sleep(2);
      if (await this.poll()) until = Date.now() + waitMs;
    }
  }

  /** Whether status says no command is queued; a request, so the bounds of the last poll no longer hold. */
  private async queueEmpty(): Promise<boolean> {
    this.fresh = false;
    return queueEmpty(this.ctx, this.conn);
  }
}

/** Waits until status says the queue is empty, so commands left by earlier checks do not count as this check's. */
export async function emptyQueue(ctx: CheckContext, conn: Connection): Promise<Finding | undefined> {
  let last = Number.POSITIVE_INFINITY;
  let until = Date.now() + ctx.timeoutMs * 2;
  for (let i = 0; ; i++) {
    const queued = resultOf(await ctx.call(conn, rpc("status", {}, `empty-${i}`)))?.queuedCommands;
    if (queued === 0) return undefined;
    if (typeof queued !== "number")
      return judgedBy(
        { kind: "result", expect: [{ path: ["result", "queuedCommands"], is: "integer" }] },
        fail("status gives no integer queuedCommands.", "queuedCommands: integer >= 0", String(queued), [
          "method.status",
        ]),
      );
    if (queued < last) until = Date.now() + ctx.timeoutMs * 2;
    last = queued;
    if (Date.now() >= until)
      return skip(
        `The queue never emptied (status kept reporting ${queued} queued commands with none completing): ` +
          "commands of other traffic or a stalled game loop, so this check's own count cannot be told apart.",
      );
    await sleep(5);
  }
}

interface History {
  seqs: number[];
  latestSeq: number;
  /** status.events read between the pages. */
  status: Record<string, unknown> | undefined;
  statusReply: Reply;
  /** latestSeq did not move while the pages and status were read: one state, read whole. */
  consistent: boolean;
}

/** The whole retained history from the start, paged with the cursor, with status read in the same state. */
async function readHistory(ctx: CheckContext, conn: Connection, maxEvents: number): Promise<History> {
  const limit = ctx.contract.limits.eventsLimitMax;
  const seqs: number[] = [];
  let cursor = 0;
  let first: number | undefined;
  let last = 0;
  // Paged until the page reaches latestSeq, not until a page is short: a page shorter than asked (a limit clamped
  // lower, method.events' fault) is no end of the history. A few more pages than maxEvents absorb events arriving.
  for (let page = 0; page < maxEvents + 3; page++) {
    const r = await readEvents(ctx, conn, cursor, limit);
    first ??= r.latestSeq;
    last = r.latestSeq;
    seqs.push(...r.events.map((e) => e.seq));
    const end = r.events.at(-1)?.seq;
    if (end === undefined || end <= cursor || end >= r.latestSeq) break;
    cursor = end;
  }
  const statusReply = await ctx.call(conn, rpc("status", {}, "status-history"));
  const after = await latestSeq(ctx, conn);
  return {
    seqs,
    latestSeq: last,
    status: resultOf(statusReply),
    statusReply,
    consistent: first === last && last === after,
  };
}

/** The type the history is filled with; a plain command of it is known to complete before the history is judged. */
const HISTORY = "conformance.history";

/**
 * Keeps the queue topped up while reading events, until more than maxEvents distinct seqs were seen (false) or the
 * history stopped growing (true); a finding where no events could be made or the budget cannot fit them.
 */
async function fill(
  ctx: CheckContext,
  ledger: Ledger,
  observed: Set<number>,
  maxEvents: number,
  maxQueued: number,
): Promise<Finding | boolean> {
  const t0 = Date.now();
  const lost = ctx.paceLoss();
  const before = observed.size;
  let grewAt = t0;
  let acts = 0;
  for (;;) {
    const size = observed.size;
    for (const s of ledger.seen) observed.add(s);
    if (observed.size > maxEvents) return false;
    if (observed.size > size) grewAt = Date.now();
    // The history stopped growing though commands were accepted: judge what a history of this size shows.
    if (Date.now() - grewAt > ctx.timeoutMs * 2) return true;
    // The events made so far measure the bridge's pace (less what slowed it meanwhile); once they span a
    // share of the budget, it says whether the rest fits.
    const elapsed = Math.max(0, Date.now() - t0 - lost());
    const made = observed.size - before;
    const needed = maxEvents + 1 - observed.size;
    const perEvent = elapsed / Math.max(1, made);
    const measured = made >= 3 && elapsed >= ctx.timeBudgetMs / SAMPLE_SHARE;
    if ((measured && elapsed + perEvent * needed > ctx.timeBudgetMs) || elapsed > ctx.timeBudgetMs)
      return skip(
        `Making the ${needed} more events that exceed maxEvents ${maxEvents} would take about ` +
          `${Math.round((perEvent * needed) / 1000)} s at this bridge's pace (${perEvent.toFixed(1)} ms an event), ` +
          `over this profile's ${ctx.timeBudgetMs / 1000} s budget (--profile thorough allows more).`,
      );
    // No more outstanding than events still needed: a full queue would only lengthen the wait after.
    if (ledger.atMost < Math.min(maxQueued, needed)) {
      const { reply } = await ledger.send(rpc("act", { type: HISTORY, intArg: acts }, `fill-${acts}`));
      acts++;
      const full = errorCode(reply) === ctx.contract.codes["error.queue-full"];
      if (full && ledger.atMost === 0)
        return skip(
          "act was rejected as queue-full with none of this check's commands outstanding (see error.queue-full).",
        );
      if (resultOf(reply)?.accepted !== true && !full)
        return judgedBy(
          { kind: "result", expect: ACCEPTED, at: `fill-${acts - 1}` },
          fail("act was not accepted, so no events could be made.", "accepted", describeReply(reply), ["method.act"]),
        );
    } else if (!(await ledger.poll())) await sleep(2);
  }
}

/** The history read whole in one state: read again (five times at most) while events kept arriving meanwhile. */
async function readSettled(ctx: CheckContext, conn: Connection, maxEvents: number): Promise<History> {
  let history = await readHistory(ctx, conn, maxEvents);
  for (let i = 0; !history.consistent && i < 5; i++) {
    await sleep(10);
    history = await readHistory(ctx, conn, maxEvents);
  }
  return history;
}

/** Whether the seqs, sorted, follow one another without a gap. */
function consecutive(seqs: Set<number>): boolean {
  const sorted = [...seqs].sort((a, b) => a - b);
  return sorted.every((seq, i) => i === 0 || seq === sorted[i - 1]! + 1);
}

export const historyExact: Check = {
  id: "integration.bounded-state/history-exact",
  rules: ["integration.bounded-state", "method.status", "method.events"],
  needs: ["completions"],
  state: "history",
  description:
    "Makes sure more than maxEvents events have existed (completing commands, paced by the queue, only as many " +
    "as the history lacks), then reads the whole history from the start, paging with the cursor, and status in " +
    "the same state.",
  note:
    "once more than maxEvents events exist, exactly maxEvents are retained, the evicted ones are the oldest, " +
    "status.events counts them, and latestSeq is the newest retained seq",
  async run(ctx) {
    const conn = await ctx.session();
    const maxEvents = await statusLimit(ctx, conn, "maxEvents");
    if (typeof maxEvents !== "number") return maxEvents;
    const maxQueued = await statusLimit(ctx, conn, "maxQueuedCommands");
    if (typeof maxQueued !== "number") return maxQueued;
    const plainFails = await plainCompletes(ctx, conn, HISTORY);
    if (plainFails) return plainFails;
    const observed = new Set((await readHistory(ctx, conn, maxEvents)).seqs);
    // Fill: keep the queue topped up while reading events, until more than maxEvents distinct seqs were seen.
    const ledger = await Ledger.open(ctx, conn);
    const stalled = await fill(ctx, ledger, observed, maxEvents, maxQueued);
    if (typeof stalled !== "boolean") return stalled;
    // One state read whole: wait out this check's own completions, then read until nothing moved meanwhile.
    if (!stalled) await ledger.drain();
    const history = await readSettled(ctx, conn, maxEvents);
    if (!history.consistent)
      return skip("Events kept arriving while the history was read, so no one state of it could be read whole.");
    const { seqs } = history;
    const exceeded = observed.size > maxEvents;
    // Judged at the status read with the history, against its events page; the events made before are left out
    // of a long report, so a reproducer makes as many first.
    const page = (path: JsonPath) => ({ ref: "events-0", path });
    const count = ["result", "events", "#"];
    const judged = (expect: Assertion[], finding: Finding) =>
      judgedBy({ kind: "result", expect, at: "status-history", needsEvents: history.latestSeq }, finding);
    const contiguous = consecutive(observed);
    const range = seqs.length ? `, seq ${seqs[0]}..${seqs.at(-1)}` : "";
    const shown = `${seqs.length} retained${range}; ${observed.size} distinct seqs seen`;
    if (seqs.length > maxEvents || (exceeded && seqs.length !== maxEvents))
      return judged(
        [{ of: "events-0", path: count, op: exceeded ? "==" : "<=", than: { value: maxEvents } }],
        fail(
          `After ${observed.size} distinct events had existed, the history retained ${seqs.length}, ` +
            `not maxEvents ${maxEvents}.`,
          `exactly ${maxEvents} retained once more than ${maxEvents} exist`,
          shown,
          ["integration.bounded-state"],
        ),
      );
    const oldest = seqs[0] ?? Number.POSITIVE_INFINITY;
    const kept = new Set(seqs);
    const evictedNewer = [...observed].filter((s) => s > oldest && !kept.has(s)).sort((a, b) => a - b);
    if (evictedNewer.length)
      return judged(
        // Seqs one per event (as the run saw them): the retained ones are the newest, up to latestSeq.
        contiguous
          ? [
              {
                of: "events-0",
                path: ["result", "events", 0, "seq"],
                op: "==",
                than: page(["result", "latestSeq"]),
                plus: 1 - seqs.length,
              },
            ]
          : [],
        fail(
          `The history evicted seq ${evictedNewer.slice(0, 5).join(", ")} but kept the older seq ${oldest}.`,
          "the evicted events are the oldest",
          shown,
          ["integration.bounded-state"],
        ),
      );
    if (history.status?.events !== seqs.length)
      return judged(
        [{ path: ["result", "events"], op: "==", than: page(count) }],
        fail(
          `status.events is ${JSON.stringify(history.status?.events)} while the history holds ${seqs.length} events.`,
          `status.events = ${seqs.length}, the events retained`,
          describeReply(history.statusReply),
          ["method.status"],
        ),
      );
    // The newest event is never the one evicted, so latestSeq names a retained event once any event existed.
    const newest = seqs.at(-1);
    if (newest === undefined ? history.latestSeq > ledger.start : history.latestSeq !== newest)
      return judged(
        [{ of: "events-0", path: ["result", "latestSeq"], op: "==", than: page(["result", "events", -1, "seq"]) }],
        fail(
          newest === undefined
            ? `latestSeq moved from ${ledger.start} to ${history.latestSeq}, but the history retains no event.`
            : `latestSeq is ${history.latestSeq} while the newest retained event is seq ${newest}.`,
          "latestSeq = the newest retained seq",
          shown,
          ["method.events"],
        ),
      );
    if (!exceeded)
      return skip(
        `The history stopped growing at ${observed.size} distinct events, not past maxEvents ${maxEvents}: no new ` +
          `event appeared for ${(ctx.timeoutMs * 2) / 1000} s though ${ledger.accepted.size} commands were accepted ` +
          "(integration.command-completion judges completion), so its bound was not reached.",
      );
    return pass(
      `After ${observed.size} distinct events the history held exactly maxEvents ${maxEvents} (the newest), ` +
        "as status.events said.",
    );
  },
};

export const checks: Check[] = [historyExact];
