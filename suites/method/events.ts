import fc from "fast-check";
import { type Check, describeReply, fail, pass, resultOf, rpc, skip } from "../harness/check.js";
import { readEvents } from "../harness/events.js";
import { statusLimit } from "../harness/expect.js";
import { makeEvents } from "../harness/lifecycle.js";

export const eventsCursor: Check = {
  id: "method.events/cursor-and-limit",
  rules: ["method.events"],
  description:
    "Completes a few commands to make events, then reads them with cursors at, between and past them, and with limits from very negative through 0 and 1 to far above 500.",
  note: "the cursor is exclusive; latestSeq is present even when nothing is newer",
  async run(ctx) {
    const made = await makeEvents(ctx, 4);
    if (typeof made !== "number") return made;
    const conn = await ctx.session();
    const all = (await readEvents(ctx, conn, made)).events;
    if (all.length < 4)
      return fail(
        `Only ${all.length} events after the cursor, though 4 commands completed.`,
        "4 command_completed events",
        JSON.stringify(all).slice(0, 300),
      );
    const seqs = all.map((e) => e.seq);
    const latest = (await readEvents(ctx, conn, made)).latestSeq;
    const atEnd = await readEvents(ctx, conn, latest);
    if (atEnd.events.length !== 0)
      return fail(
        `events after latestSeq ${latest} returned ${atEnd.events.length} events.`,
        "no events past latestSeq",
        JSON.stringify(atEnd.events).slice(0, 300),
      );
    return ctx.property(
      fc.record({
        cursorAt: fc.integer({ min: 0, max: seqs.length - 1 }),
        limit: fc.oneof(
          fc.constantFrom(0, 1, 2, -1, 500, 501, 10_000),
          fc.integer({ min: -1_000_000, max: 1_000_000 }),
          fc.constant(-(2 ** 31)),
          fc.constant(2 ** 31),
        ),
      }),
      async ({ cursorAt, limit }) => {
        const c = await ctx.session();
        const afterSeq = seqs[cursorAt]!;
        const reply = await ctx.call(c, rpc("events", { afterSeq, limit }, "limit"));
        const r = resultOf(reply);
        const events = (r?.events ?? []) as { seq: number }[];
        const newer = seqs.filter((s) => s > afterSeq).length; // events we made after this cursor (others may exist too)
        const clamped = Math.min(Math.max(limit, 1), 500);
        if (!r || !Array.isArray(r.events))
          return fail("events returned no events array.", "{latestSeq, events}", describeReply(reply));
        if (events.some((e) => e.seq <= afterSeq))
          return fail(
            `events after ${afterSeq} included seq ${events.find((e) => e.seq <= afterSeq)!.seq}.`,
            `every seq > ${afterSeq} (exclusive cursor)`,
            describeReply(reply),
          );
        if (events.length > clamped)
          return fail(
            `limit ${limit} returned ${events.length} events.`,
            `at most ${clamped} (limit clamped to 1..500)`,
            describeReply(reply),
          );
        if (events.length < Math.min(clamped, newer))
          return fail(
            `limit ${limit} returned ${events.length} events where ${Math.min(clamped, newer)} were due.`,
            `min(clamp(limit, 1, 500), events after the cursor) = ${Math.min(clamped, newer)}`,
            describeReply(reply),
          );
        return pass("ok");
      },
    );
  },
};

export const historyBound: Check = {
  id: "method.events/history-bound",
  rules: ["method.events", "integration.bounded-state"],
  description:
    "Completes maxEvents + 5 commands (paced by the queue) and checks the oldest events are gone and the retained count stays within maxEvents.",
  note: "the retained history is bounded by maxEvents",
  async run(ctx) {
    const conn = await ctx.session();
    const maxEvents = await statusLimit(ctx, conn, "maxEvents");
    if (typeof maxEvents !== "number") return maxEvents;
    const needed = maxEvents + 5;
    // Measure the drain rate on a few commands before committing to the whole history.
    const t0 = Date.now();
    const first = await makeEvents(ctx, 5);
    if (typeof first !== "number") return first;
    const perCommand = (Date.now() - t0) / 5;
    if (perCommand * needed > ctx.timeBudgetMs) {
      return skip(
        `Completing ${needed} commands would take about ${Math.round((perCommand * needed) / 1000)} s at this bridge's pace, over this profile's ${ctx.timeBudgetMs / 1000} s budget (--profile thorough allows more).`,
      );
    }
    const made = await makeEvents(ctx, needed);
    if (typeof made !== "number") return made;
    const c = await ctx.session();
    const after = await readEvents(ctx, c, 0, 500);
    const st = resultOf(await ctx.call(c, rpc("status", {}, "status-after")));
    if (typeof st?.events === "number" && st.events > maxEvents)
      return fail(
        `status reports ${st.events} retained events, over maxEvents ${maxEvents}.`,
        `events <= ${maxEvents}`,
        JSON.stringify(st),
        ["integration.bounded-state"],
      );
    const retained = after.events.length;
    if (retained > maxEvents)
      return fail(
        `events returned ${retained} events, more than maxEvents ${maxEvents}.`,
        `at most ${maxEvents} retained`,
        `${retained}`,
        ["integration.bounded-state"],
      );
    if (after.events.some((e) => e.seq <= made) && maxEvents < needed)
      return fail(
        `After ${needed} newer events, events at or before seq ${made} are still retained.`,
        `the oldest events dropped (maxEvents ${maxEvents})`,
        `oldest retained seq ${after.events[0]?.seq}`,
        ["integration.bounded-state"],
      );
    return pass(`After ${needed} completions the history held ${retained} events (maxEvents ${maxEvents}).`);
  },
};

export const checks: Check[] = [eventsCursor, historyBound];
