// The report every reporter receives, and the Reporter interface. The JSON report is this
// object (schemaVersion 1): scripts depend on its shape, so only ever add optional fields.
import type { Level, Observed } from "../protocol/contract.js";
import type { Oracle, ReasonKind, ReplayedCase, TranscriptEntry, Unjudged, Verdict } from "../protocol/verdict.js";

export type { Oracle, ReasonKind, TranscriptEntry, Unjudged, Verdict };

export interface Report {
  schemaVersion: 1;
  tool: { name: string; version: string };
  /** The contract revision the run judged against. */
  contract: { version: number; sha256: string; rules: number };
  target: { kind: "bridge" | "client"; endpoint?: string; command?: string; spawned: boolean; label?: string };
  seed: number;
  /** Generated cases per property: with the seed, what a recorded path indexes into. */
  runs?: number;
  /** With --shard I/N: the part of the checks this report holds (absent in a whole run and a merged one). */
  shard?: { index: number; count: number };
  startedAt: string;
  /** The run was interrupted (Ctrl-C): the checks it did not reach are `skip` with the reason. */
  interrupted?: true;
  durationMs: number;
  /** Rules per verdict. */
  summary: Record<Verdict, number>;
  /** With --baseline: known failures that did not fail the run, and entries that now pass. */
  baseline?: {
    file: string;
    known: BaselineRecord[];
    stale: BaselineRecord[];
    /** Entries past their until date: their failures counted. */
    expired?: BaselineRecord[];
    /** Known-flaky checks that failed every time they were re-sent. */
    consistent?: BaselineRecord[];
  };
  /** Why no check could run (the target was unreachable, a token is missing): the root cause, once. */
  blocked?: string;
  /**
   * The bridge stopped serving a duty after a check broke it (and could not be restarted):
   * later checks that need it are `error` (inconclusive), and this is their root cause.
   */
  stopped?: { duty: "completions" | "replies"; after: string; detail: string };
  /** A spawned bridge that died during the run: how it ended and its last stderr lines. */
  targetExits?: { check?: string; exit: string; stderr: string }[];
  /** Where the time went: lines and bytes over the wire, and how long the run waited for the bridge. */
  wire?: { lines: number; bytesSent: number; bytesReceived: number; waitingMs: number };
  /**
   * Where else the time went: restarting the bridge, shrinking failures, re-sending them, waiting
   * for completions; and the pace that sized a wait for a completion (ten times the slowest step
   * of the game loop seen, at least a quarter second, at most twice the reply timeout).
   */
  time?: {
    restartsMs: number;
    shrinkingMs: number;
    recheckingMs: number;
    completionsMs: number;
    completionWaitMs: number;
    slowestStepMs: number;
    /**
     * The run's wall time in parts that do not overlap and add up to durationMs: restarting the bridge, rechecking and
     * shrinking (each without the restarts within it), and the rest (the checks, preflight, the canary). `overlap`:
     * checks run side by side shrank at the same time, so the named parts add up to more and the rest is 0.
     * completionsMs and wire.waitingMs are spent within these parts.
     */
    parts?: { restartingMs: number; recheckingMs: number; shrinkingMs: number; checksMs: number; overlap?: true };
    /**
     * A run dealt among several bridges side by side (--lanes): how many, and their time together, lane by lane from
     * the run's start to its last check; `parts` then add up to `totalMs`, not to durationMs.
     */
    lanes?: { count: number; totalMs: number };
  };
  /** The state cells the deep checks' steps reached (where a check reports them). */
  stateCoverage?: StateCoverage;
  /** How many rules each root cause of the run's failures failed (absent where nothing failed). */
  rootCauses?: RootCauseTally[];
  /** With --duration: the time-boxed fuzzing after the fixed pass (summed over the parts of a merged campaign). */
  fuzz?: { durationMs: number; rounds: number; checks: number };
  /** A merged campaign (--merge of --duration runs): what each part ran and reached, in the order given. */
  parts?: CampaignPart[];
  rules: RuleReport[];
}

/**
 * One root cause of a run's failures: the rule a failing check blamed first, or the one whose plain form broke
 * (a check that pointed there instead of judging its own rules); and every rule its failures failed.
 */
export interface RootCauseTally {
  /** Full rule ID. */
  rule: string;
  /** The rules (full IDs) that failed by it, the cause's own first where it failed. */
  failed: string[];
  /** Checks that were not judged on their own rules because the plain form broke this one. */
  pointedBy?: string[];
}

/** One part of a fuzzing campaign: its shard or seed, its fuzzing rounds and check runs, what it reached and found. */
export interface CampaignPart {
  file: string;
  seed: number;
  shard?: { index: number; count: number };
  rounds: number;
  checks: number;
  cellsReached?: number;
  failingChecks: number;
}

/** Which cells of the bridge's state space a run reached (suites/harness/cells.ts names them). */
export interface StateCoverage {
  reached: number;
  total: number;
  /** Every cell; `unreachable` says why one cannot be reached against this bridge (one connection at a time, no token). */
  cells: { id: string; reached: boolean; unreachable?: string }[];
  /** With --duration: the cells the time-boxed fuzzing reached that the fixed pass had not. */
  addedByDuration?: string[];
}

export interface BaselineRecord {
  id: string;
  reason: string;
  until?: string;
  /** Known entries: the failing rules (full IDs) whose every failure the baseline accepted. */
  rules?: string[];
}

export interface RuleReport {
  id: string;
  title: string;
  verdict: Verdict;
  group: string;
  level: Level;
  observed: Observed;
  requirement: string;
  /** Why the rule has no check result (skipped rules). */
  reason?: string;
  /** What kind of reason `reason` is: reporters sort rules by it. */
  reasonKind?: ReasonKind;
  /**
   * Said, never a verdict: what its checks found on rules outside the selection (--rules / --skip), and
   * checks that could not judge it where others did.
   */
  notes?: string[];
  checks: CheckReport[];
}

export interface CheckReport {
  id: string;
  verdict: Verdict;
  message: string;
  /** A check skipped or not judged: what kind of reason its message gives. */
  reasonKind?: ReasonKind;
  expected?: string;
  actual?: string;
  description?: string;
  requirement?: string;
  durationMs?: number;
  counterexample?: string;
  seed?: number;
  path?: string;
  /** How often the minimal case failed again when re-sent (--recheck). */
  reproduced?: { tries: number; failed: number; grade: "consistent" | "flaky" | "not-reproduced" };
  /** The commands of a stateful case (fast-check's replayPath), replayed with seed and path. */
  replayPath?: string;
  /** A command line that re-runs exactly this case. */
  replay?: string;
  transcript?: TranscriptEntry[];
  /** How the failure judged the reply to the case's last request, for a reproducer outside this tool. */
  oracle?: Oracle;
  /**
   * The recorded case run first, exactly (--replay, the corpus, --last-failed), and its verdict:
   * what a claim that a failure is fixed rests on.
   */
  replayed?: ReplayedCase;
  /** The run was interrupted (Ctrl-C) while this check ran: stopped there, with no verdict (`skip`). */
  interrupted?: true;
  /**
   * With `error`: why the check could not judge, for a cause outside its rules (an earlier check stopped
   * the bridge serving, or its deadline cut it short). It makes a rule `error` only where no check judged it.
   */
  unjudged?: Unjudged;
}

/** A check as reporters see it. */
export interface CheckInfo {
  id: string;
  rules: readonly string[];
  description: string;
}

/** What a run is about to do; the target's label is redacted like everything a reporter sees. */
export interface RunInfo {
  target: { label: string; endpoint: string; spawned: boolean };
  seed: number;
  checks: number;
  profile: string;
  strict: boolean;
}

/** Subscribers to a run. Every hook is optional; one that throws is reported and the run goes on. */
export interface Reporter {
  name: string;
  onRunStart?(info: RunInfo): void | Promise<void>;
  onCheckStart?(check: CheckInfo, index: number, total: number): void | Promise<void>;
  onCheckEnd?(check: CheckInfo, result: CheckReport): void | Promise<void>;
  onRunEnd?(report: Report): void | Promise<void>;
}

/** How a report names its target: the endpoint of a bridge, or the command of a client. */
export const targetName = (target: Report["target"]): string => target.endpoint ?? target.command ?? target.kind;
