// What a run finds out as it goes: the counts of the wire and the commands, the state cells
// reached, a result per check, the bridge's exits, and why the checks left are not run.
import type { Report } from "../../reports/types.js";
import type { CanaryMemory } from "../../suites/harness/canary.js";
import { type Check, CommandLedger } from "../../suites/harness/check.js";
import { WireStats } from "../../suites/harness/connection.js";
import type { Blocked } from "../../suites/harness/preflight.js";
import type { Redactor } from "../../suites/harness/redact.js";
import type { CheckResult } from "../aggregate.js";
import type { AttemptContext } from "../attempt.js";
import { RunCoverage } from "../coverage.js";
import type { RunConfig } from "./config.js";
import type { Plan } from "./plan.js";

/** Why the checks left are not run: an interrupted run skips them, a lost bridge leaves them unjudged. */
export interface Stop {
  problem: string;
  interrupted?: boolean;
  /** The check after which the bridge stopped serving: the root cause of every check not judged since. */
  after?: string;
}

export class RunState {
  readonly stats = new WireStats();
  readonly ledger = new CommandLedger();
  readonly coverage = new RunCoverage();
  /** One result per check; written by record.ts alone. */
  readonly results = new Map<string, CheckResult>();
  readonly exits: NonNullable<Report["targetExits"]> = [];
  /** What the canary learnt of the bridge (a command type that completes). */
  readonly canary: CanaryMemory = {};
  failures = 0;
  /** The canary has looked at the bridge before the first check. */
  preflighted = false;
  stop?: Stop;
  /** A duty the bridge stopped doing (completions): checks that need it cannot be judged. */
  stopped?: Report["stopped"];
  /** With --duration: the fuzzing rounds after the fixed pass, and the check runs in them. */
  fuzzed?: { rounds: number; checks: number };

  /** Why no check, or none but the ones it names, can reach a verdict (from the preflight). */
  constructor(readonly blocked?: Blocked) {
    this.stop = blocked;
  }
}

/** One run under way: what was asked, its plan, what it found so far, and how it logs. */
export interface Run {
  readonly config: RunConfig;
  readonly plan: Plan;
  readonly state: RunState;
  /** What every attempt of this run starts from. */
  readonly attempt: AttemptContext;
  /** Logs a line, redacted: a bridge's stderr or a reporter's error may carry the token. */
  readonly log: (line: string) => void;
  readonly redact: Redactor;
  /** Checks begun so far of all the run's checks, for the reporters: shared by the lanes (lanes.ts). */
  readonly progress: { begun: number; readonly total: number };
  /** In a lane: the checks any lane judges as it becomes free, shared by the lanes (lanes.ts). */
  readonly floating?: Floating;
}

/**
 * The checks that float (plan.ts), shared by the lanes: each lane takes the next once its own are judged, so the lanes
 * end together whatever this bridge's pace makes each check cost. A lane that can no longer judge leaves them to the
 * others; the last lane left takes what remains, so every check is recorded.
 */
export class Floating {
  private next = 0;
  /** Lanes that may still take a check. */
  private lanes = 0;

  constructor(private readonly checks: readonly Check[]) {}

  /** A lane takes part. */
  join(): void {
    this.lanes++;
  }

  /** Whether checks are left to take. */
  left(): boolean {
    return this.next < this.checks.length;
  }

  /** The next check for a lane, or undefined once none is left or the lane may leave them to another. */
  take(canJudge: boolean): Check | undefined {
    if (!this.left() || (!canJudge && this.lanes > 1)) return undefined;
    return this.checks[this.next++];
  }

  /** A lane is done (it ran out of checks to take, or left them to another). */
  leave(): void {
    this.lanes--;
  }
}
