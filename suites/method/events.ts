import fc from "fast-check";
import type { JsonPath } from "../../protocol/verdict.js";
import { type Check, type CheckContext, type Finding, fail, pass, resultOf, rpc, skip } from "../harness/check.js";
import { classesFirst, cover } from "../harness/classes.js";
import type { Connection } from "../harness/connection.js";
import { type EventsResult, latestSeq, pollId, readEvents } from "../harness/events.js";
import { judgedBy, statusLimit } from "../harness/expect.js";
import { fillHistory, historyBoundFrom } from "../harness/history.js";
import { clearLargeCompletions, largeText, makeLargeCompletions, pageThrough } from "../harness/large.js";
import { advertisedTypes, makeEvents } from "../harness/lifecycle.js";
import { CHANGING, droppedAfter, eventsCall, judgePage, needing, readAll, seqsOf } from "../harness/paging.js";

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
        fail(
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
        fail(
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
          const id = pollId(s, "limit");
          const called = await eventsCall(ctx, s, { afterSeq, limit }, id);
          if (!("page" in called)) return needing(called, after.latestSeq);
          if (retained.changed || called.page.latestSeq !== retained.latestSeq) continue;
          const what = `events after ${afterSeq} with limit ${limit}`;
          const broken = judgePage(ctx, called.page, retained.events, afterSeq, limit, what, called.shown, id);
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
      const id = pollId(c, "first-page");
      const called = await eventsCall(ctx, c, { afterSeq: cursor, limit }, id);
      if (!("page" in called)) return called;
      if (called.page.latestSeq !== retained.latestSeq) return "changed";
      const what = `events after ${cursor} with limit ${limit}`;
      const broken = judgePage(ctx, called.page, retained.events, cursor, limit, what, called.shown, id);
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

const PAGE_EVENTS: JsonPath = ["result", "events"];
const PAGE_COUNT: JsonPath = ["result", "events", "#"];
/** A path in the head page, the first read of an edges pass (events after 0, id edge-00). */
const fromHead = (path: JsonPath) => ({ ref: "edge-00", path });

/** One pass of cursorEdges: the connection, its call ids, the head page read first, and what was found. */
interface EdgePass {
  ctx: CheckContext;
  c: Connection;
  max: number;
  nextId: () => string;
  first: EventsResult;
  latest: number;
  findings: Finding[];
}

type EdgeCall = { page: EventsResult; shown: string; at: string };

async function edges(ctx: CheckContext, c: Connection): Promise<Finding | "changed"> {
  const max = ctx.contract.limits.eventsLimitMax;
  // An id of its own per call, each as long as the others, so the line each page may fill is the same.
  let calls = 0;
  const nextId = () => `edge-${String(calls++).padStart(2, "0")}`;
  const head = await eventsCall(ctx, c, { afterSeq: 0, limit: max }, nextId());
  if (!("page" in head)) return head;
  const { page: first, shown } = head;
  const latest = first.latestSeq;
  if (!first.events.length)
    return judgedBy(
      { kind: "result", expect: [{ path: PAGE_COUNT, op: ">", than: { value: 0 } }] },
      fail(
        "events after 0 returned no events, though commands just completed and the history keeps at least one.",
        "the oldest retained events (seq > 0)",
        shown,
      ),
    );
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
  const run: EdgePass = { ctx, c, max, nextId, first, latest, findings: [] };
  const stopped =
    (await edgesFromOldest(run, fromOldest)) ?? (await edgesBare(run)) ?? (await edgesPastEnd(run, pastEnd));
  if (stopped) return stopped;
  const again = await readEvents(ctx, c, 0, max, nextId());
  if (again.latestSeq !== latest) return "changed";
  return (
    run.findings[0] ?? pass(`${fromOldest.length + pastEnd.length + 2} cursors each read the page the contract gives.`)
  );
}

/** events with `params` under the next id; a latestSeq other than the head's is noted as a finding. */
async function edgeCall(run: EdgePass, params: Record<string, unknown>): Promise<EdgeCall | Finding> {
  const { ctx, c, max, latest } = run;
  const at = run.nextId();
  const called = await eventsCall(ctx, c, params, at);
  if (!("page" in called)) return called;
  if (called.page.latestSeq !== latest) {
    // Either the history moved (checked below), or the bridge reports a different latestSeq for this cursor.
    run.findings.push(
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
        fail(
          `events ${JSON.stringify(params)} reported latestSeq ${called.page.latestSeq}, where events after 0 ` +
            `just reported ${latest}.`,
          `latestSeq ${latest}: the newest event's seq, whatever the cursor`,
          called.shown,
        ),
      ),
    );
  }
  return { ...called, at };
}

/** Cursors below every seq read the same page as afterSeq 0; returns the finding that ends the pass, if any. */
async function edgesFromOldest(run: EdgePass, fromOldest: Record<string, unknown>[]): Promise<Finding | undefined> {
  const { first } = run;
  for (const params of fromOldest) {
    const called = await edgeCall(run, params);
    if (!("page" in called)) return called;
    const got = called.page.events;
    if (got.length !== first.events.length || got.some((e, i) => e.seq !== first.events[i]!.seq))
      run.findings.push(
        judgedBy(
          {
            kind: "result",
            expect: [
              {
                anyOf: [
                  [{ path: ["result", "latestSeq"], op: "!=", than: fromHead(["result", "latestSeq"]) }],
                  [
                    { path: PAGE_COUNT, op: "==", than: fromHead(PAGE_COUNT) },
                    { path: PAGE_EVENTS, prefixOf: fromHead(PAGE_EVENTS), by: ["seq"] },
                  ],
                ],
              },
            ],
            at: called.at,
          },
          fail(
            `events ${JSON.stringify(params)} did not read from the oldest retained event as afterSeq 0 does.`,
            `seqs ${seqsOf(first.events)} (every retained seq is greater than this cursor)`,
            `seqs ${seqsOf(got)}`,
          ),
        ),
      );
  }
  return undefined;
}

/** events with no params reads from the oldest retained event; returns the finding that ends the pass, if any. */
async function edgesBare(run: EdgePass): Promise<Finding | undefined> {
  const { first } = run;
  const bare = await edgeCall(run, {});
  if (!("page" in bare)) return bare;
  const got = bare.page.events;
  if (!got.length || got.some((e, i) => e.seq !== first.events[i]?.seq))
    run.findings.push(
      judgedBy(
        {
          kind: "result",
          expect: [
            { path: PAGE_COUNT, op: ">", than: { value: 0 } },
            { path: PAGE_EVENTS, prefixOf: fromHead(PAGE_EVENTS), by: ["seq"] },
          ],
          at: bare.at,
        },
        fail(
          "events with no params did not read from the oldest retained event.",
          `a non-empty page starting at seq ${first.events[0]!.seq} (afterSeq defaults to before every event; the ` +
            `default limit is within the clamp)`,
          `seqs ${seqsOf(got)}`,
        ),
      ),
    );
  return undefined;
}

/** Cursors at or past latestSeq read an empty page; returns the finding that ends the pass, if any. */
async function edgesPastEnd(
  run: EdgePass,
  pastEnd: { afterSeq: number; limit: number }[],
): Promise<Finding | undefined> {
  for (const params of pastEnd) {
    const called = await edgeCall(run, params);
    if (!("page" in called)) return called;
    if (called.page.events.length)
      run.findings.push(
        judgedBy(
          { kind: "result", expect: [{ path: PAGE_COUNT, equals: 0 }], at: called.at },
          fail(
            `events after ${params.afterSeq} (latestSeq ${run.latest}) returned events.`,
            "no events: none is newer than latestSeq",
            called.shown,
          ),
        ),
      );
  }
  return undefined;
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
      const unfilled = await fillHistory(ctx, needed, max);
      if (unfilled) return unfilled;
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
        const id = pollId(c, "limit-max");
        const called = await eventsCall(ctx, c, { afterSeq: 0, limit }, id);
        if (!("page" in called)) return needing(called, all.latestSeq);
        if (called.page.latestSeq !== all.latestSeq) {
          changed = true;
          break;
        }
        const what = `events after 0 with limit ${limit} (${retained} retained)`;
        const broken = judgePage(ctx, called.page, all.events, 0, limit, what, called.shown, id);
        if (broken) return needing(broken, all.latestSeq);
      }
      if (!changed)
        return pass(`With ${retained} events retained, every limit from ${max - 1} up was clamped exactly.`);
    }
    return skip(CHANGING);
  },
};

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
  cleanUp: clearLargeCompletions,
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
    const count = Math.min(maxEvents as number, 2);
    const text = largeText(ctx, type, count);
    const before = await latestSeq(ctx, conn);
    const made = await makeLargeCompletions(ctx, conn, type, text, count);
    if (!("findings" in made)) return made;
    const { findings, notes } = made;
    const paged = await pageThrough(ctx, conn, before, max);
    if (!("pages" in paged)) return paged;
    const { largest, pages } = paged;
    if (findings[0]) return findings[0];
    return pass(
      `${count} completion(s) of ${type} with ${text.length}-byte stringArgs: every reply line stayed within ` +
        `${maxLineBytes} bytes (the largest events line ${largest} bytes, ${pages} page(s))${notes}.`,
    );
  },
};

export const checks: Check[] = [eventsCursor, firstPage, cursorEdges, historyBound, limitMax, largeMessages];
