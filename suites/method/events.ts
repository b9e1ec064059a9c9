import fc from "fast-check";
import type { JsonPath, Oracle } from "../../protocol/verdict.js";
import {
  type Check,
  type CheckContext,
  describeReply,
  type Finding,
  fail,
  fail as failed,
  pass,
  resultOf,
  rpc,
  skip,
} from "../harness/check.js";
import { classesFirst, cover } from "../harness/classes.js";
import type { Connection } from "../harness/connection.js";
import {
  collectCompletions,
  type EventsResult,
  eventsPageOracle,
  judgeEvents,
  latestSeq,
  readEvents,
} from "../harness/events.js";
import { judgedBy, statusLimit } from "../harness/expect.js";
import { act, advertisedTypes, judgeCompletion, makeEvents } from "../harness/lifecycle.js";

type Entry = EventsResult["events"][number];

/**
 * Every retained event after `afterSeq`, page by page with the largest limit; `changed` when the
 * history moved meanwhile.
 */
async function readAll(
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
async function droppedAfter(ctx: CheckContext, conn: Connection, cursor: number): Promise<boolean> {
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

const seqsOf = (entries: Entry[]) => `[${entries.map((e) => e.seq).join(", ")}]`;

/**
 * A page read with `limit`, against every retained event after the same cursor (`retained`):
 * no more than the clamped limit, the first of the retained in order, and all the clamp allows
 * unless so many would not fit in one line (the line limit binds replies: fewer is then allowed).
 */
function judgePage(
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
  const fail = (...args: Parameters<typeof failed>) => judgedBy(oracle, failed(...args));
  if (got.length > clamped)
    return fail(
      `${what} returned ${got.length} events, more than the clamped limit.`,
      `at most ${clamped} (limit clamped to ${min}..${max})`,
      shown,
    );
  for (let i = 0; i < got.length; i++) {
    if (got[i]!.seq !== retained[i]?.seq)
      return fail(
        `${what} did not return the first retained events after the cursor (a client paging with the cursor ` +
          `would skip events).`,
        `the first ${got.length} of the retained events after the cursor, ascending: seqs ` +
          `${seqsOf(retained.slice(0, got.length))}`,
        `seqs ${seqsOf(got)}`,
      );
  }
  const due = Math.min(clamped, retained.length);
  if (got.length < due && surelyFits(ctx, id, page.latestSeq, retained.slice(0, due)))
    return fail(
      `${what} returned ${got.length} events where ${due} were due.`,
      `min(limit clamped to ${min}..${max}, ${retained.length} retained after the cursor) = ${due}`,
      shown,
    );
  return undefined;
}

/** events with `params`, judged: the result, or the finding that there was none. */
async function eventsCall(
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
      failed(
        `events ${JSON.stringify(params)} was not answered with a result.`,
        "{latestSeq, events}: afterSeq and limit are any integers, and both may be left out",
        shown,
      ),
    );
  return { page: judgeEvents(result, afterSeq, shown), shown };
}

/** A failure whose case reads events made before it (outside the case, or left out of the report): a reproducer makes them first. */
const needing = (finding: Finding, latestSeq: number): Finding =>
  finding.oracle ? { ...finding, oracle: { ...finding.oracle, needsEvents: latestSeq } } : finding;

const CHANGING =
  "the event history kept changing while it was read (commands still queued by an earlier check or another " +
  "client), so the pages could not be compared";

export const eventsCursor: Check = {
  id: "method.events/cursor-and-limit",
  rules: ["method.events"],
  needs: ["completions"],
  description:
    "Completes up to four commands (as many as maxEvents holds), reads every retained event after them page by " +
    "page, then reads with cursors before, at and past each, and limits from far below the clamp's lower edge " +
    "through both edges to far above, comparing each page with the retained events.",
  note:
    "the cursor is exclusive; a page is the first min(clamped limit, retained after the cursor) events after it, " +
    "ascending (fewer only where more would not fit in one line)",
  async run(ctx) {
    const conn = await ctx.session();
    const maxEvents = await statusLimit(ctx, conn, "maxEvents");
    if (typeof maxEvents !== "number") return maxEvents;
    const count = Math.min(4, maxEvents);
    const made = await makeEvents(ctx, count);
    if (typeof made !== "number") return made;
    const c = await ctx.session();
    const after = await readAll(ctx, c, made);
    if (after.events.length < count) {
      if (await droppedAfter(ctx, c, made))
        return skip(
          `Only ${after.events.length} of the ${count} events this check made were still retained: newer events ` +
            `(commands still queued by an earlier check) dropped them first.`,
        );
      return judgedBy(
        {
          kind: "result",
          expect: [{ path: ["result", "events", "#"], op: ">=", than: { value: count } }],
          at: `all-${made}`,
        },
        failed(
          `Only ${after.events.length} events after the cursor ${made}, though ${count} commands completed there ` +
            `and none were dropped.`,
          `${count} command_completed events after ${made}`,
          JSON.stringify(after.events).slice(0, 300),
        ),
      );
    }
    const atEnd = await readEvents(ctx, c, after.latestSeq);
    if (atEnd.events.length !== 0)
      return judgedBy(
        { kind: "result", expect: [{ path: ["result", "events", "#"], equals: 0 }] },
        failed(
          `events after latestSeq ${after.latestSeq} returned ${atEnd.events.length} events.`,
          "no events past latestSeq",
          JSON.stringify(atEnd.events).slice(0, 300),
        ),
      );
    const cursors = [made, ...after.events.map((e) => e.seq)];
    const { eventsLimitMin: min, eventsLimitMax: max } = ctx.contract.limits;
    return ctx.property(
      fc.record({
        at: fc.integer({ min: 0, max: cursors.length - 1 }),
        limit: fc.oneof(
          fc.constantFrom(min - 1, min, min + 1, 0, -1, max - 1, max, max + 1, max * 20),
          fc.integer({ min: -1_000_000, max: 1_000_000 }),
          fc.constantFrom(-(2 ** 31), 2 ** 31, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER),
        ),
      }),
      async ({ at, limit }) => {
        const s = await ctx.session();
        const afterSeq = cursors[at]!;
        for (let attempt = 0; attempt < 3; attempt++) {
          const retained = await readAll(ctx, s, afterSeq);
          const called = await eventsCall(ctx, s, { afterSeq, limit }, "limit");
          if (!("page" in called)) return needing(called, after.latestSeq);
          if (retained.changed || called.page.latestSeq !== retained.latestSeq) continue;
          const what = `events after ${afterSeq} with limit ${limit}`;
          const broken = judgePage(ctx, called.page, retained.events, afterSeq, limit, what, called.shown, "limit");
          // The events this case reads were made before it: a reproducer makes as many first.
          return broken ? needing(broken, after.latestSeq) : pass("ok");
        }
        return skip(CHANGING);
      },
      // Both sides of both clamp edges, then far beyond them, from the oldest cursor and the newest in turn.
      classesFirst(
        cover(
          [min - 1, min, max, max + 1, min + 1, max - 1, 0, -1, max * 20, Number.MAX_SAFE_INTEGER],
          [0, cursors.length - 1],
          10,
        ).map(([limit, at]) => ({ at, limit })),
        ctx.runs - 10,
      ),
    );
  },
};

export const firstPage: Check = {
  id: "method.events/first-page",
  rules: ["method.events"],
  needs: ["completions"],
  description:
    "Completes up to three commands, then reads after the cursor before them, and after 0, with every limit " +
    "below the number retained: each page must be the oldest retained events after its cursor.",
  note:
    "a page holds the first retained events after the cursor, not the newest: a client paging with the cursor must " +
    "miss none",
  async run(ctx) {
    const conn = await ctx.session();
    const maxEvents = await statusLimit(ctx, conn, "maxEvents");
    if (typeof maxEvents !== "number") return maxEvents;
    if (maxEvents < 2)
      return skip(
        `maxEvents is ${maxEvents}: with one retained event the first page and the newest are the same, so which ` +
          `one a bridge returns cannot be told.`,
      );
    const count = Math.min(3, maxEvents);
    const made = await makeEvents(ctx, count);
    if (typeof made !== "number") return made;
    const c = await ctx.session();
    for (let attempt = 0; attempt < 3; attempt++) {
      const found = await firstPages(ctx, c, made);
      if (found !== "changed") return found;
    }
    return skip(CHANGING);
  },
};

async function firstPages(ctx: CheckContext, c: Connection, made: number): Promise<Finding | "changed"> {
  let compared = 0;
  for (const cursor of [made, 0]) {
    const retained = await readAll(ctx, c, cursor);
    if (retained.changed) return "changed";
    const upTo = Math.min(retained.events.length - 1, 3);
    for (let limit = ctx.contract.limits.eventsLimitMin; limit <= upTo; limit++) {
      const called = await eventsCall(ctx, c, { afterSeq: cursor, limit }, "first-page");
      if (!("page" in called)) return called;
      if (called.page.latestSeq !== retained.latestSeq) return "changed";
      const what = `events after ${cursor} with limit ${limit}`;
      const broken = judgePage(ctx, called.page, retained.events, cursor, limit, what, called.shown, "first-page");
      if (broken) return broken;
      compared++;
    }
  }
  if (!compared)
    return skip(
      "Fewer than two events were retained after the cursor (newer events dropped the ones this check made), so " +
        "no page could be shorter than the retained history.",
    );
  return pass(`${compared} pages shorter than the retained history each held its oldest events.`);
}

export const cursorEdges: Check = {
  id: "method.events/cursor-edges",
  rules: ["method.events"],
  needs: ["completions"],
  description:
    "Completes a command or two, then reads events with afterSeq 0, negative (-1, -2^31, -(2^53-1)), left out, " +
    "at latestSeq, just past it, far past it and 2^53-1, and with no params at all.",
  note:
    "afterSeq is any integer: one below every seq (0, negative, or left out) reads from the oldest retained event; " +
    "at or past latestSeq the page is empty, and latestSeq is still there, the same integer",
  async run(ctx) {
    const conn = await ctx.session();
    const maxEvents = await statusLimit(ctx, conn, "maxEvents");
    if (typeof maxEvents !== "number") return maxEvents;
    const made = await makeEvents(ctx, Math.min(2, maxEvents));
    if (typeof made !== "number") return made;
    const c = await ctx.session();
    for (let attempt = 0; attempt < 3; attempt++) {
      const found = await edges(ctx, c);
      if (found !== "changed") return found;
    }
    return skip(CHANGING);
  },
};

async function edges(ctx: CheckContext, c: Connection): Promise<Finding | "changed"> {
  const max = ctx.contract.limits.eventsLimitMax;
  // An id of its own per call, each as long as the others, so the line each page may fill is the same.
  let calls = 0;
  const nextId = () => `edge-${String(calls++).padStart(2, "0")}`;
  const events = ["result", "events"];
  const count = ["result", "events", "#"];
  const head = await eventsCall(ctx, c, { afterSeq: 0, limit: max }, nextId());
  if (!("page" in head)) return head;
  const { page: first, shown } = head;
  const latest = first.latestSeq;
  if (!first.events.length)
    return judgedBy(
      { kind: "result", expect: [{ path: count, op: ">", than: { value: 0 } }] },
      failed(
        "events after 0 returned no events, though commands just completed and the history keeps at least one.",
        "the oldest retained events (seq > 0)",
        shown,
      ),
    );
  const fromHead = (path: JsonPath) => ({ ref: "edge-00", path });
  const fromOldest = [
    { afterSeq: -1, limit: max },
    { afterSeq: -(2 ** 31), limit: max },
    { afterSeq: -Number.MAX_SAFE_INTEGER, limit: max },
    { limit: max },
  ];
  const pastEnd = [latest, latest + 1, latest + 1000, Number.MAX_SAFE_INTEGER].map((afterSeq) => ({
    afterSeq,
    limit: max,
  }));
  const findings: Finding[] = [];
  const judged = async (params: Record<string, unknown>) => {
    const at = nextId();
    const called = await eventsCall(ctx, c, params, at);
    if (!("page" in called)) return called;
    if (called.page.latestSeq !== latest) {
      // Either the history moved (checked below), or the bridge reports a different latestSeq for this cursor.
      findings.push(
        judgedBy(
          {
            kind: "result",
            // The newest seq as the bridge gives it from the start when judged: a replay's completions may land later.
            expect: [
              {
                path: ["result", "latestSeq"],
                op: "==",
                than: {
                  fresh: { method: "events", params: { afterSeq: 0, limit: max } },
                  path: ["result", "latestSeq"],
                },
              },
            ],
            at,
          },
          failed(
            `events ${JSON.stringify(params)} reported latestSeq ${called.page.latestSeq}, where events after 0 ` +
              `just reported ${latest}.`,
            `latestSeq ${latest}: the newest event's seq, whatever the cursor`,
            called.shown,
          ),
        ),
      );
    }
    return { ...called, at };
  };
  for (const params of fromOldest) {
    const called = await judged(params);
    if (!("page" in called)) return called;
    const got = called.page.events;
    if (got.length !== first.events.length || got.some((e, i) => e.seq !== first.events[i]!.seq))
      findings.push(
        judgedBy(
          {
            kind: "result",
            expect: [
              {
                anyOf: [
                  [{ path: ["result", "latestSeq"], op: "!=", than: fromHead(["result", "latestSeq"]) }],
                  [
                    { path: count, op: "==", than: fromHead(count) },
                    { path: events, prefixOf: fromHead(events), by: ["seq"] },
                  ],
                ],
              },
            ],
            at: called.at,
          },
          failed(
            `events ${JSON.stringify(params)} did not read from the oldest retained event as afterSeq 0 does.`,
            `seqs ${seqsOf(first.events)} (every retained seq is greater than this cursor)`,
            `seqs ${seqsOf(got)}`,
          ),
        ),
      );
  }
  const bare = await judged({});
  if (!("page" in bare)) return bare;
  const got = bare.page.events;
  if (!got.length || got.some((e, i) => e.seq !== first.events[i]?.seq))
    findings.push(
      judgedBy(
        {
          kind: "result",
          expect: [
            { path: count, op: ">", than: { value: 0 } },
            { path: events, prefixOf: fromHead(events), by: ["seq"] },
          ],
          at: bare.at,
        },
        failed(
          "events with no params did not read from the oldest retained event.",
          `a non-empty page starting at seq ${first.events[0]!.seq} (afterSeq defaults to before every event; the ` +
            `default limit is within the clamp)`,
          `seqs ${seqsOf(got)}`,
        ),
      ),
    );
  for (const params of pastEnd) {
    const called = await judged(params);
    if (!("page" in called)) return called;
    if (called.page.events.length)
      findings.push(
        judgedBy(
          { kind: "result", expect: [{ path: count, equals: 0 }], at: called.at },
          failed(
            `events after ${params.afterSeq} (latestSeq ${latest}) returned events.`,
            "no events: none is newer than latestSeq",
            called.shown,
          ),
        ),
      );
  }
  const again = await readEvents(ctx, c, 0, max, nextId());
  if (again.latestSeq !== latest) return "changed";
  return (
    findings[0] ?? pass(`${fromOldest.length + pastEnd.length + 2} cursors each read the page the contract gives.`)
  );
}

export const historyBound: Check = {
  id: "method.events/history-bound",
  rules: ["method.events", "integration.bounded-state"],
  needs: ["completions"],
  state: "history",
  description:
    "Completes five commands, reads the history, then completes commands until the five oldest events retained " +
    "have maxEvents newer ones after them, counted by events, not by seq (paced by the queue and the history), and " +
    "checks they are gone and the retained count, read page by page, stays within maxEvents. A history earlier " +
    "checks made counts toward it; where the bound broke on such a history, it is judged again from a fresh bridge.",
  note: "the retained history is bounded by maxEvents",
  async run(ctx) {
    const found = await historyBoundFrom(ctx);
    // A history earlier checks made saves most of a fill. A failure there is judged again from empty, as every
    // replay of it starts: one that does not come back is what that history showed, not a broken bound.
    if (!found.taken || found.finding.verdict !== "fail" || !(await ctx.fresh())) return found.finding;
    const again = (await historyBoundFrom(ctx)).finding;
    if (again.verdict !== "pass") return again;
    return {
      ...found.finding,
      verdict: "warn",
      message: `${found.finding.message} (on a history earlier checks made; from an empty one the bound held)`,
    };
  },
};

/** The history bound, judged from the history as it is: `taken` when events made before the check were retained. */
async function historyBoundFrom(ctx: CheckContext): Promise<{ finding: Finding; taken: boolean }> {
  const conn = await ctx.session();
  const maxEvents = await statusLimit(ctx, conn, "maxEvents");
  if (typeof maxEvents !== "number") return { finding: maxEvents, taken: false };
  // Measure the drain rate on the first few commands before committing to the rest.
  const t0 = Date.now();
  const made = await makeEvents(ctx, 5);
  if (typeof made !== "number") return { finding: made, taken: false };
  const perCommand = (Date.now() - t0) / 5;
  const start = await readAll(ctx, await ctx.session(), 0);
  const taken = start.events.some((e) => e.seq <= made);
  // The five oldest retained (or all, in a smaller history) must go once maxEvents newer events exist. Seqs may
  // skip, so the newer events are counted: those retained now, and one at least for every command completed.
  const oldest = start.events.slice(0, 5);
  const gone = oldest[oldest.length - 1]?.seq ?? start.latestSeq;
  const newer = start.events.filter((e) => e.seq > gone).length;
  const needed = Math.max(1, maxEvents - newer);
  if (perCommand * needed > ctx.timeBudgetMs) {
    const finding = skip(
      `Completing ${needed} more commands would take about ${Math.round((perCommand * needed) / 1000)} s at this ` +
        `bridge's pace, over this profile's ${ctx.timeBudgetMs / 1000} s budget (--profile thorough allows more).`,
    );
    return { finding, taken };
  }
  const rest = await makeEvents(ctx, needed);
  if (typeof rest !== "number") return { finding: rest, taken };
  return { finding: await judgeHistoryBound(ctx, maxEvents, gone, newer + needed, 5 + needed), taken };
}

/** Judges the history once at least `newer` events newer than seq `gone` exist, `made` of them completed here. */
async function judgeHistoryBound(
  ctx: CheckContext,
  maxEvents: number,
  gone: number,
  newer: number,
  made: number,
): Promise<Finding> {
  const c = await ctx.session();
  const after = await readAll(ctx, c, 0);
  const st = resultOf(await ctx.call(c, rpc("status", {}, "status-after")));
  // The events were made before what is judged, and the report may leave their making out: a reproducer makes them.
  const judged = (oracle: Oracle, finding: Finding) => needing(judgedBy(oracle, finding), after.latestSeq);
  const count = ["result", "events", "#"];
  if (typeof st?.events === "number" && st.events > maxEvents)
    return judged(
      { kind: "result", expect: [{ path: ["result", "events"], op: "<=", than: { value: maxEvents } }] },
      fail(
        `status reports ${st.events} retained events, over maxEvents ${maxEvents}.`,
        `events <= ${maxEvents}`,
        JSON.stringify(st),
        ["integration.bounded-state"],
      ),
    );
  const retained = after.events.length;
  if (retained > maxEvents)
    return judged(
      { kind: "result", expect: [{ path: count, op: "<=", than: { value: maxEvents } }], at: "all-0" },
      fail(
        `events returned ${retained} events, more than maxEvents ${maxEvents}.`,
        `at most ${maxEvents} retained`,
        `${retained}`,
        ["integration.bounded-state"],
      ),
    );
  if (after.events.some((e) => e.seq <= gone) && newer >= maxEvents)
    return judged(
      {
        kind: "result",
        expect: [
          {
            path: ["result", "events", 0, "seq"],
            op: ">",
            than: { here: ["result", "latestSeq"] },
            plus: -maxEvents,
          },
        ],
        at: "all-0",
      },
      fail(
        `With at least ${newer} newer events, events at or before seq ${gone} are still retained.`,
        `the oldest events dropped (maxEvents ${maxEvents})`,
        `oldest retained seq ${after.events[0]?.seq}`,
        ["integration.bounded-state"],
      ),
    );
  return pass(`After ${made} completions the history held ${retained} events (maxEvents ${maxEvents}).`);
}

export const limitMax: Check = {
  id: "method.events/limit-max",
  rules: ["method.events"],
  needs: ["completions"],
  state: "history",
  description:
    "With more events retained than the clamp's upper edge (made, where maxEvents and the time budget allow), " +
    "reads after 0 with limits just below, at and above that edge and far above it: each page holds exactly the " +
    "clamped number.",
  note:
    "limit is clamped to exactly the contract's range: above its upper edge a page holds that many events, no more " +
    "and no fewer",
  async run(ctx) {
    const max = ctx.contract.limits.eventsLimitMax;
    const conn = await ctx.session();
    const maxEvents = await statusLimit(ctx, conn, "maxEvents");
    if (typeof maxEvents !== "number") return maxEvents;
    if (maxEvents <= max)
      return skip(
        `maxEvents is ${maxEvents}: the history never holds more than ${max} events, so no page can be asked for ` +
          `more than the clamp allows and its upper edge is not observable.`,
      );
    // status.events counts the retained history; where it does not say, count it page by page.
    const counted = resultOf(await ctx.call(conn, rpc("status", {}, "retained")))?.events;
    let retained = Number.isSafeInteger(counted) ? (counted as number) : (await readAll(ctx, conn, 0)).events.length;
    const needed = max + 1 - retained;
    if (needed > 0) {
      // Earlier checks may have filled the history already; otherwise make the rest, if time allows.
      const t0 = Date.now();
      const probe = await makeEvents(ctx, Math.min(5, needed));
      if (typeof probe !== "number") return probe;
      const perCommand = (Date.now() - t0) / Math.min(5, needed);
      if (perCommand * needed > ctx.timeBudgetMs)
        return skip(
          `Completing the ${needed} more commands needed for over ${max} retained events would take about ` +
            `${Math.round((perCommand * needed) / 1000)} s at this bridge's pace, over this profile's ` +
            `${ctx.timeBudgetMs / 1000} s budget (--profile thorough allows more).`,
        );
      if (needed > 5) {
        const made = await makeEvents(ctx, needed - 5);
        if (typeof made !== "number") return made;
      }
    }
    const c = await ctx.session();
    for (let attempt = 0; attempt < 3; attempt++) {
      const all = await readAll(ctx, c, 0);
      retained = all.events.length;
      if (all.changed) continue;
      if (retained <= max)
        return skip(
          `Only ${retained} events were retained after more were made (maxEvents ${maxEvents}), so a page of ` +
            `more than ${max} could not be asked for.`,
        );
      let changed = false;
      for (const limit of [max - 1, max, max + 1, Number.MAX_SAFE_INTEGER]) {
        const called = await eventsCall(ctx, c, { afterSeq: 0, limit }, "limit-max");
        if (!("page" in called)) return needing(called, all.latestSeq);
        if (called.page.latestSeq !== all.latestSeq) {
          changed = true;
          break;
        }
        const what = `events after 0 with limit ${limit} (${retained} retained)`;
        const broken = judgePage(ctx, called.page, all.events, 0, limit, what, called.shown, "limit-max");
        if (broken) return needing(broken, all.latestSeq);
      }
      if (!changed)
        return pass(`With ${retained} events retained, every limit from ${max - 1} up was clamped exactly.`);
    }
    return skip(CHANGING);
  },
};

/** Bytes a request stays under the line limit by, so its own size is never the question. */
const REQUEST_MARGIN = 64;

export const largeMessages: Check = {
  id: "method.events/large-messages",
  rules: ["method.events", "wire.line-limit"],
  needs: ["completions"],
  description:
    "Acts with stringArg values as large as a request allows (echo, where advertised), one or two as the history " +
    "holds, then pages through their completions with the largest limit and a long request id, measuring every " +
    "reply line.",
  note:
    "the line limit binds replies: a page whose events would not fit in one line carries fewer (a client pages on " +
    "with the cursor), never none while newer events are retained",
  // A bridge that pages these events over the line limit would do so to every later reader of its
  // history: the large completions go once judged, so that no later check (nor a later run) fails for
  // what this one left behind. A bridge this tool owns is started afresh (one start, not a history
  // filled at the game's pace); a running one has them pushed out by as many small ones as it holds.
  async cleanUp(ctx, finding) {
    if (finding.verdict !== "fail" || !finding.rules?.includes("wire.line-limit")) return;
    if (await ctx.fresh()) return;
    const maxEvents = resultOf(await ctx.call(await ctx.session(), rpc("status", {}, "status")))?.maxEvents;
    if (Number.isSafeInteger(maxEvents)) await makeEvents(ctx, maxEvents as number);
  },
  async run(ctx) {
    const conn = await ctx.session();
    // Whether status is right is integration.bounded-state's business: without a size, this check only skips.
    const maxEvents = resultOf(await ctx.call(conn, rpc("status", {}, "status")))?.maxEvents;
    if (!Number.isSafeInteger(maxEvents) || (maxEvents as number) < 1)
      return skip("status gives no positive maxEvents, so how many large completions the history holds is unknown.");
    const types = await advertisedTypes(ctx, conn);
    const type = types.includes("echo") ? "echo" : (types[0] ?? "conformance.large-message");
    const { maxLineBytes } = ctx.contract.limits;
    const max = ctx.contract.limits.eventsLimitMax;
    // Two texts of over half a line each, where the history holds two: echoed, one page of both is over
    // the limit. Where it holds one, one text just under the request limit: its echo, in a reply with
    // more around it, is over on its own.
    const count = Math.min(maxEvents as number, 2);
    const overhead = Buffer.byteLength(JSON.stringify(rpc("act", { type, stringArg: "" }, "large-0")));
    const size = count === 2 ? Math.ceil(maxLineBytes * 0.55) : maxLineBytes - overhead - REQUEST_MARGIN;
    const text = "large completion message ".repeat(Math.ceil(maxLineBytes / 25)).slice(0, size);
    const before = await latestSeq(ctx, conn);
    // One at a time, each followed to its completion: a full queue is never retried with a request this large.
    // Every reply line is measured as it is read: one over the limit fails wire.line-limit.
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
    // A long id makes the reply longer still, as any client's id may.
    const id = `large-page-${"p".repeat(256)}`;
    let cursor = before;
    let largest = 0;
    let pages = 0;
    for (let read = 0; read < 1000; read++) {
      const reply = await ctx.call(conn, rpc("events", { afterSeq: cursor, limit: max }, id));
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
    if (findings[0]) return findings[0];
    return pass(
      `${count} completion(s) of ${type} with ${text.length}-byte stringArgs: every reply line stayed within ` +
        `${maxLineBytes} bytes (the largest events line ${largest} bytes, ${pages} page(s))${notes}.`,
    );
  },
};

export const checks: Check[] = [eventsCursor, firstPage, cursorEdges, historyBound, limitMax, largeMessages];
