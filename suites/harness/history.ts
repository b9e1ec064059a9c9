// Filling the event history at the bridge's pace, within the profile's time budget, and judging its
// bound once it is full: the method.events history checks' shared steps.
import type { Oracle } from "../../protocol/verdict.js";
import { type CheckContext, type Finding, fail, pass, resultOf, rpc, skip } from "./check.js";
import { judgedBy, statusLimit } from "./expect.js";
import { makeEvents } from "./lifecycle.js";
import { needing, readAll } from "./paging.js";

/** The history bound, judged from the history as it is: `taken` when events made before the check were retained. */
export async function historyBoundFrom(ctx: CheckContext): Promise<{ finding: Finding; taken: boolean }> {
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

/**
 * Completes `needed` more commands so that over `max` events are retained: five first to measure the pace,
 * the rest only if they fit the time budget. Returns the finding that stopped it, if any.
 */
export async function fillHistory(ctx: CheckContext, needed: number, max: number): Promise<Finding | undefined> {
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
  return undefined;
}
