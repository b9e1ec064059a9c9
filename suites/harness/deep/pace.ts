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

  /**
   * `paceMs` undefined: the pace is not known, and nothing is left out. `endsAt`: the end of the check's own time
   * (its deadline, or the profile's budget from its start), which no step's commands may be seen to run past.
   */
  constructor(
    readonly paceMs: number | undefined,
    readonly commands: number,
    readonly endsAt = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * The allowance of a check: its share of the time to its deadline, never more than the profile's time budget, in
   * commands at the measured pace. A quick profile does not wait for a history of maxEvents the history checks skip.
   */
  static of(ctx: CheckContext): LoopAllowance {
    const pace = ctx.ledger?.meanStepMs;
    const left = (ctx.deadline ?? Date.now() + ctx.timeBudgetMs) - Date.now();
    const loopMs = Math.min(left * LOOP_SHARE, ctx.timeBudgetMs);
    const endsAt = Date.now() + Math.min(left, ctx.timeBudgetMs);
    return new LoopAllowance(pace, pace ? Math.floor(loopMs / pace) : Number.POSITIVE_INFINITY, endsAt);
  }

  /** Whether `n` more commands fit; if not, the step of `kind` is counted as left out. */
  affords(n: number, kind: string): boolean {
    if (this.spent + n <= this.commands) return true;
    this.leftOut.set(kind, (this.leftOut.get(kind) ?? 0) + 1);
    return false;
  }

  /**
   * Part way through a step, at the pace the step measured itself (`msEach`, its round trips included): whether its
   * `n` commands left still end within the check's time; if not, the step of `kind` is counted as left out. The pace
   * known before may be read from single commands: on a loop that completes one command a tick, a command accepted at
   * some moment of a tick waits only the rest of it, so a step judged affordable at that pace can take twice as long.
   */
  stillAffords(n: number, msEach: number, kind: string): boolean {
    if (this.paceMs === undefined || Date.now() + n * msEach <= this.endsAt) return true;
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
