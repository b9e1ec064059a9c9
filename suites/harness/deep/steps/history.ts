// The history's and the cursor's families: the history filled to maxEvents and past it, and events read from cursors
// placed against the retained window's edges.

import type { CursorAim, Slot } from "../../../../generators/sessionStep.js";
import { cursorCell } from "../../cells.js";
import { Backoff } from "../../events.js";
import type { DeepModel } from "../model.js";
import { check, type DeepReal, FILL_TYPE } from "../real.js";
import type { StepDefs } from "./step.js";

/**
 * Reads the window from the oldest retained event, then the events after a cursor placed against it. When nothing
 * happened between the two reads (latestSeq unchanged), the second must be the window's continuation after the
 * cursor: the same seqs and events, none skipped.
 */
async function events(real: DeepReal, slot: Slot, aim: CursorAim, limit: number): Promise<void> {
  const window = await real.eventsCall(slot, 0, real.ctx.contract.limits.eventsLimitMax);
  if (!window) return;
  const oldest = window.events[0]?.seq;
  const newest = window.latestSeq;
  const mid = window.events[Math.floor((window.events.length - 1) / 2)]?.seq;
  const at: Record<CursorAim, number | undefined> = {
    zero: 0,
    "before-oldest": oldest !== undefined && oldest > 2 ? oldest - 2 : undefined,
    "at-oldest": oldest !== undefined ? oldest - 1 : undefined,
    inside: mid !== undefined && mid < newest ? mid : undefined,
    "at-newest": newest,
    "past-newest": newest + 3,
  };
  const cursor = at[aim] ?? newest;
  const cell = cursorCell(cursor, oldest, newest);
  if (cell) real.cov.reach(cell);
  const page = await real.eventsCall(slot, cursor, limit);
  if (!page || page.latestSeq !== window.latestSeq) return;
  const expected = window.events.filter((e) => e.seq > cursor);
  const shown = `after ${cursor}: ${JSON.stringify(page.events.map((e) => e.seq))}; the window just read: ${oldest}..${window.events.at(-1)?.seq} (latestSeq ${newest})`;
  check(
    !expected.length || page.events.length > 0,
    "method.events",
    `events after ${cursor} returned nothing while the history retains newer events.`,
    `events from seq ${expected[0]?.seq}`,
    shown,
  );
  for (let i = 0; i < Math.min(expected.length, page.events.length); i++) {
    const want = expected[i]!;
    const got = page.events[i]!;
    check(
      got.seq === want.seq && JSON.stringify(got.event) === JSON.stringify(want.event),
      "method.events",
      `events after ${cursor} returned seq ${got.seq} where the retained history has seq ${want.seq} next.`,
      `every retained event with seq > ${cursor}, in order, none skipped`,
      shown,
    );
  }
}

/** Commands a fill makes before its own pace is trusted: one command's time may be a moment the machine lost. */
const MEASURED = 32;

/** Acts until the history holds maxEvents (plus `extra`), following the completions as they come. */
async function fillHistory(model: DeepModel, real: DeepReal, slot: Slot, extra: number): Promise<void> {
  await real.authorized(0); // completions are followed on the first connection
  const status = await real.status(slot);
  if (!status) return;
  let need = status.maxEvents - status.events + extra;
  const cells = ["history.exactly-max", "history.evicting", "cursor.before-oldest"];
  if (!real.pace.affords(need, "fill-history")) {
    real.cov.cannot(cells, real.pace.reason(need));
    return;
  }
  const batchMax = Math.max(1, Math.min(status.maxQueuedCommands, status.maxEvents));
  const started = Date.now();
  let made = 0;
  while (need > 0) {
    // Once a few dozen are made, the rest at the pace this fill sees.
    const msEach = made >= MEASURED ? (Date.now() - started) / made : 0;
    if (!real.pace.stillAffords(need, msEach, "fill-history")) {
      real.cov.cannot(cells, real.pace.reason(need, msEach));
      return;
    }
    const batch = new Set<number>();
    while (batch.size < Math.min(batchMax, need)) {
      const until = Date.now() + real.ctx.timeoutMs * 2;
      const pause = new Backoff();
      let outcome = await real.act(slot, { type: FILL_TYPE });
      while (outcome === "full" && Date.now() < until) {
        await pause.wait(until);
        outcome = await real.act(slot, { type: FILL_TYPE });
      }
      if (outcome !== "accepted") return;
      batch.add(model.commandSeq);
    }
    need -= batch.size;
    await real.status(slot);
    const until = Date.now() + real.ctx.timeoutMs * 2;
    const pause = new Backoff();
    const unseen = model.unseen;
    while (!(await real.settled(batch, unseen)) && Date.now() < until) {
      if (!(await real.follow())) await pause.wait(until);
    }
    made += batch.size;
  }
  await real.status(slot);
}

export const HISTORY_STEPS: StepDefs<"events" | "fill-history"> = {
  events: { apply: (step, _model, real) => events(real, step.slot, step.cursor, step.limit) },
  "fill-history": {
    async apply(step, model, real) {
      await fillHistory(model, real, step.slot, step.extra);
      await events(real, step.slot, step.cursor, 2);
    },
  },
};
