// What the deep check's sequences may ask of the game loop: commands at the pace the run measured, within the
// check's time. A step whose cost grows with the bridge's limits (a history of maxEvents, a queue filled twice) runs
// only where what is left allows it; otherwise it is left out and says so, so a slow loop costs steps, not the verdict.

import type { CheckContext } from "../check.js";

/** The share of the check's time its sequences may spend waiting on the game loop; the rest is round trips and starts. */
const LOOP_SHARE = 0.4;

export class LoopAllowance {
  /** Commands accepted so far, each a turn of the game loop to wait for. */
  spent = 0;
  /** Steps left out for want of time, by kind. */
  readonly leftOut = new Map<string, number>();

  /** `paceMs` undefined: the pace is not known, and nothing is left out. */
  constructor(
    readonly paceMs: number | undefined,
    readonly commands: number,
  ) {}

  /**
   * The allowance of a check: its share of the time to its deadline, never more than the profile's time budget, in
   * commands at the measured pace. A quick profile does not wait for a history of maxEvents the history checks skip.
   */
  static of(ctx: CheckContext): LoopAllowance {
    const pace = ctx.ledger?.meanStepMs;
    const left = (ctx.deadline ?? Date.now() + ctx.timeBudgetMs) - Date.now();
    const loopMs = Math.min(left * LOOP_SHARE, ctx.timeBudgetMs);
    return new LoopAllowance(pace, pace ? Math.floor(loopMs / pace) : Number.POSITIVE_INFINITY);
  }

  /** Whether `n` more commands fit; if not, the step of `kind` is counted as left out. */
  affords(n: number, kind: string): boolean {
    if (this.spent + n <= this.commands) return true;
    this.leftOut.set(kind, (this.leftOut.get(kind) ?? 0) + 1);
    return false;
  }

  /**
   * Part way through a step, at the pace the step measured itself (`msEach`): whether its `n` commands left still fit
   * the time the allowance has left; if not, the step of `kind` is counted as left out. A fill keeps the queue full,
   * so it sees the loop's throughput, where the pace known before may be read from single commands: on a loop that
   * completes one command a tick, a command accepted at some moment of a tick waits only the rest of it.
   */
  stillAffords(n: number, msEach: number, kind: string): boolean {
    if (this.paceMs === undefined || n * msEach <= (this.commands - this.spent) * this.paceMs) return true;
    this.leftOut.set(kind, (this.leftOut.get(kind) ?? 0) + 1);
    return false;
  }

  /** Why a step was left out, for the cells it would have reached: `n` commands at `msEach` (the pace known). */
  reason(n: number, msEach = this.paceMs ?? 0): string {
    const s = Math.round((n * msEach) / 1000);
    return (
      `${n} commands would take about ${s} s at this bridge's pace (${Math.round(msEach)} ms a command), ` +
      "more than the check's time leaves"
    );
  }

  /** What the finding says of the steps left out ("" where none was). */
  note(): string {
    if (!this.leftOut.size) return "";
    const steps = [...this.leftOut].map(([kind, n]) => `${kind} ×${n}`).join(", ");
    return ` At this bridge's pace (${Math.round(this.paceMs ?? 0)} ms a command) these steps were left out: ${steps}.`;
  }
}
