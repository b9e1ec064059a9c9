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
  // The first few commands mark the oldest events that must go; their time starts the pace the rest is made at.
  const pace = new FillPace(ctx);
  const made = await pace.make(5);
  if (typeof made !== "number") return { finding: made, taken: false };
  const start = await readAll(ctx, await ctx.session(), 0);
  const taken = start.events.some((e) => e.seq <= made);
  // The five oldest retained (or all, in a smaller history) must go once maxEvents newer events exist. Seqs may
  // skip, so the newer events are counted: those retained now, and one at least for every command completed.
  const oldest = start.events.slice(0, 5);
  const gone = oldest[oldest.length - 1]?.seq ?? start.latestSeq;
  const newer = start.events.filter((e) => e.seq > gone).length;
  const needed = Math.max(1, maxEvents - newer);
  const rest = await pace.fill(needed, `Completing ${needed} more commands`);
  if (rest) return { finding: rest, taken };
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

/** Completes `needed` more commands so that over `max` events are retained, as far as the time budget allows. */
export async function fillHistory(ctx: CheckContext, needed: number, max: number): Promise<Finding | undefined> {
  return new FillPace(ctx).fill(
    needed,
    `Completing the ${needed} more commands needed for over ${max} retained events`,
  );
}

/** The share of the budget a pace must be measured over before it may skip a fill: a few commands are noise. */
export const SAMPLE_SHARE = 20;

/**
 * Commands made at the bridge's pace, within the profile's time budget. The pace is the wall time less what slowed
 * the bridge meanwhile (CheckContext.paceLoss), measured over a growing sample: a moment the machine stood still, or
 * a hiccup in the first few commands, is not a slow bridge, and a fill the bridge can make is not skipped because the
 * machine was busy.
 */
class FillPace {
  private readonly t0 = Date.now();
  private readonly lost: () => number;
  private made = 0;

  constructor(private readonly ctx: CheckContext) {
    this.lost = ctx.paceLoss();
  }

  /** The bridge's time so far. */
  private ms(): number {
    return Math.max(0, Date.now() - this.t0 - this.lost());
  }

  /** Makes `count` commands; the seq before them, or the finding that stopped them. */
  async make(count: number): Promise<number | Finding> {
    const made = await makeEvents(this.ctx, count);
    if (typeof made === "number") this.made += count;
    return made;
  }

  /** Makes `needed` more in batches that double, each only while the pace so far says the rest fits the budget. */
  async fill(needed: number, what: string): Promise<Finding | undefined> {
    const budget = this.ctx.timeBudgetMs;
    for (let left = needed; left > 0; ) {
      const ms = this.ms();
      const perCommand = ms / Math.max(1, this.made);
      const measured = this.made >= 5 && ms >= budget / SAMPLE_SHARE;
      if ((measured && ms + perCommand * left > budget) || ms > budget)
        return skip(
          `${what} would take about ${Math.round((perCommand * left) / 1000)} s more at this bridge's pace ` +
            `(${perCommand.toFixed(1)} ms a command, measured over ${this.made}), over this profile's ` +
            `${budget / 1000} s budget (--profile thorough allows more).`,
        );
      const batch = Math.min(left, Math.max(5, this.made));
      const made = await this.make(batch);
      if (typeof made !== "number") return made;
      left -= batch;
    }
    return undefined;
  }
}
