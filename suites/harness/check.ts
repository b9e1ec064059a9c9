import type fc from "fast-check";
import { type Contract, type RuleId, contract as shipped } from "../../protocol/contract.js";
import type {
  Oracle,
  ReasonKind,
  ReplayedCase,
  RootCause,
  TranscriptEntry,
  Unjudged,
  Verdict,
} from "../../protocol/verdict.js";
import type { CellsReached } from "./cells.js";
import type { Connection, ReadResult } from "./connection.js";

export type { Unjudged, Verdict };

/** What a check concluded. */
export interface Finding {
  verdict: Verdict;
  message: string;
  /** Skipped or not judged: what kind of reason the message gives (reporters sort by it, never by the words). */
  reasonKind?: ReasonKind;
  expected?: string;
  actual?: string;
  /** The rules this finding is about, where narrower than the check's own (or another's, e.g. a malformed response). */
  rules?: RuleId[];
  counterexample?: string;
  seed?: number;
  path?: string;
  /** How often the minimal case failed again when re-sent: a grade of how reproducible the failure is. */
  reproduced?: Reproduced;
  /**
   * The verdict rests on time: something did not come, or a peer did not end, within a wait. Such a finding is
   * rechecked, quieter, before it is reported, since a busy machine can make it without the peer's fault.
   */
  timed?: boolean;
  /** Which commands of a stateful case ran (fast-check's replayPath): with seed and path, it replays the case. */
  replayPath?: string;
  transcript?: TranscriptEntry[];
  /**
   * How a failure judged the reply to the case's last request, for a program outside this tool
   * (an exported reproducer); set where the judgement is one of the shared expectations.
   */
  oracle?: Oracle;
  /** The recorded case that ran first (a replay, the corpus, --last-failed), and its verdict then. */
  replayed?: ReplayedCase;
  /** The state cells (suites/harness/cells.ts) the check's steps reached, whatever its verdict. */
  cells?: CellsReached;
  /** The plain form of the case already broke this rule: `rules` names it alone, the check's own went unjudged. */
  rootCause?: RootCause;
  /** An accepted command that never completed, as sent: whether its plain form completes says whose fault it is. */
  unfinished?: Record<string, unknown>;
  /** The run was interrupted (Ctrl-C) while the check ran: it was stopped there, with no verdict (`skip`). */
  interrupted?: true;
  /** With `error`: the check could not judge for a cause outside its rules (an earlier root cause, its deadline). */
  unjudged?: Unjudged;
}

export interface Reproduced {
  tries: number;
  failed: number;
  grade: "consistent" | "flaky" | "not-reproduced";
}

/**
 * A check: what it sends, the rules it judges, and how. The requirement it checks is the
 * contract's text for its first rule, plus `note` where the check reads something into it.
 */
export interface Check {
  /** Stable: "<rule>/<case>", e.g. "error.method-not-found/unknown-method". */
  id: string;
  rules: readonly RuleId[];
  /** What it sends. */
  description: string;
  /** How the check reads the rule, where the contract's words alone do not say it. */
  note?: string;
  /**
   * What the bridge must still do for this check to reach a verdict. Once an earlier check
   * left the bridge no longer completing commands, a check that needs completions is
   * inconclusive, not failed. A check without it makes no command a conformant bridge accepts:
   * it may run beside the history fill, and where a full queue changes its answer it fails
   * there and is judged again alone.
   */
  needs?: readonly Duty[];
  /**
   * Bridge state the check makes, or takes over where an earlier check made it: a history
   * fuller than the page limit costs hundreds of completions, made once in a run. Shards keep
   * the checks of one state together, so each state is still made once.
   */
  state?: SharedState;
  /**
   * Shared state an earlier check made that this check's first case takes over where it finds it,
   * without needing it (it makes its own where there is none): it runs after the checks of that
   * state, and is dealt to shards alone.
   */
  inherits?: SharedState;
  /**
   * Why the check has no machine oracle a program outside this tool could apply, where it has
   * none: its exported reproducer then compares the reply with the one recorded.
   */
  noOracle?: string;
  /**
   * Why a standalone script cannot re-send its failing cases (a session over several connections
   * that races them, judged by a model of the bridge's state): its replay command reproduces them.
   */
  replayOnly?: string;
  run(ctx: CheckContext): Promise<Finding>;
  /**
   * Clears state the check left that a later check (or a later run) would meet, once it is
   * judged and outside its case, so its transcript holds only the case.
   */
  cleanUp?(ctx: CheckContext, finding: Finding): Promise<void>;
}

/** A duty a bridge serves that later checks rely on. */
export type Duty = "completions";

/** Bridge state that is costly to make and that checks share: "history", a full event history. */
export type SharedState = "history";

/** Checks with the same key are dealt to one shard together: those of one shared state, or the check alone. */
export const shardUnit = (check: Check): string => (check.state ? `state:${check.state}` : check.id);

/** The requirement a check judges, in the contract's words. */
export function requirementOf(check: Pick<Check, "rules" | "note">, contract: Contract): string {
  const text = check.rules.filter((id) => contract.has(id)).map((id) => contract.rule(id).requirement)[0] ?? "";
  return check.note ? `${text} [${check.note}]` : text;
}

/** A parsed response line that passed the envelope judge. */
export interface Response {
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export type Reply = { kind: "response"; response: Response; raw: Buffer } | Exclude<ReadResult, { kind: "line" }>;

export interface ReadOptions {
  /** The id the response must echo; taken from the request object when not given (null for raw text or bytes). */
  expectId?: unknown;
  /** Also accept id null (-32600 and -32700 with id null are always accepted). */
  orNullId?: boolean;
  /** Accept any id: the request's id is unreadable by design (e.g. malformed UTF-8 inside it). */
  anyId?: boolean;
  timeoutMs?: number;
}

export interface CallOptions extends ReadOptions {
  splitAt?: number[];
  delayMs?: number;
}

export interface PropertyOptions<T = unknown> {
  /** Cases to try (default: the profile's run count). */
  runs?: number;
  /** Inputs tried first, before the generated ones (e.g. every advertised type with every ill-typed value). */
  examples?: T[];
  /** Check the bridge still answers on a fresh connection after each case. */
  liveness?: boolean;
  /**
   * Once a case fails, restart a bridge this tool owns before every shrink attempt (and after
   * the last), so the minimal case replays alike; against an endpoint, do not shrink.
   */
  restartAfterFailure?: boolean;
  /**
   * The check is one of this many that draw alike but for one field: together they wait on the game loop for one
   * check's share of the time budget, each for its part of it (the classes run whole whatever the share).
   */
  sharedBy?: number;
  /**
   * Judges `examples` together (their commands sharing the game loop's turns) and says how many of them, from the
   * first, passed as each would alone; undefined where it tried none. Given the classes after the first, once that
   * one passed alone; used only where the bridge can be restarted and no exact case is replayed: the cases after
   * those settled run one at a time on a fresh bridge.
   */
  settle?(examples: T[]): Promise<number | undefined>;
}

/** Steps of the game loop seen before its pace sizes the wait for a completion. */
const PACE_STEPS = 3;
/** The wait for a completion, as a multiple of the slowest step seen. */
const PACE_FACTOR = 10;
/**
 * The shortest wait for a completion, whatever the pace: a game may hitch for a moment. Moments in
 * which this machine or the bridge did not run at all lengthen the wait (collectCompletions).
 */
const PACE_FLOOR_MS = 250;

/**
 * Every command a run saw accepted, and every completion it read: what the queue may still hold
 * by this run's own account. A queue that stays full when every command accepted has completed
 * is not freeing its slots.
 */
export class CommandLedger {
  readonly accepted = new Set<number>();
  readonly completed = new Set<number>();
  /** The longest wait seen between one awaited completion and the next (or the first, after acting). */
  slowestStepMs = 0;
  /** How many such steps were seen: the pace is trusted once a few were. */
  steps = 0;
  /** All those steps together: over `steps`, the time one completion takes at this bridge's pace. */
  stepsMs = 0;
  /** Time spent waiting for completions. */
  waitedMs = 0;

  /** Takes note of one step of the game loop as a reader waiting for completions saw it. */
  step(ms: number): void {
    this.steps++;
    this.stepsMs += ms;
    this.slowestStepMs = Math.max(this.slowestStepMs, ms);
  }

  /** The time a completion takes on average at this bridge's pace (undefined until the pace is known). */
  get meanStepMs(): number | undefined {
    return this.paced ? this.stepsMs / this.steps : undefined;
  }

  /**
   * A bridge started afresh counts its commands from the start again: the account starts over
   * with it. Its pace is kept: it is the same bridge, started by the same command.
   */
  restarted(): void {
    this.accepted.clear();
    this.completed.clear();
  }

  /** Whether enough steps were seen to know the bridge's pace. */
  get paced(): boolean {
    return this.steps >= PACE_STEPS;
  }

  /**
   * How long to wait for the next completion before calling a command lost: twice the reply
   * timeout until the bridge's pace is known, then ten times its slowest step (at least a quarter of a second,
   * so a game's hitch is no lost command), never more than at first.
   */
  completionWaitMs(timeoutMs: number): number {
    const most = timeoutMs * 2;
    if (!this.paced) return most;
    return Math.min(most, Math.max(PACE_FLOOR_MS, Math.ceil(this.slowestStepMs * PACE_FACTOR)));
  }

  /** Accepted commands whose completion no reader has seen. */
  get outstanding(): number {
    let n = 0;
    for (const seq of this.accepted) if (!this.completed.has(seq)) n++;
    return n;
  }

  /** Takes note of a reply: an act's commandSeq, an events page's completions. */
  note(method: unknown, result: unknown): void {
    const r = result as { commandSeq?: unknown; events?: unknown } | undefined;
    if (method === "act" && Number.isSafeInteger(r?.commandSeq)) this.accepted.add(r!.commandSeq as number);
    else if (method === "events" && Array.isArray(r?.events))
      for (const e of r.events as { event?: { type?: unknown; commandSeq?: unknown } }[])
        if (e?.event?.type === "command_completed" && Number.isSafeInteger(e.event.commandSeq))
          this.completed.add(e.event.commandSeq as number);
  }
}

/** What a check may use. Checks never print; they return findings. */
export interface CheckContext {
  contract: Contract;
  timeoutMs: number;
  runs: number;
  /** Time a slow check (e.g. filling the event history) may spend before it skips with the reason. */
  timeBudgetMs: number;
  /** When the check's time runs out (Date.now() scale; absent outside a run). */
  readonly deadline?: number;
  /**
   * Replaying one stateful case: the replayPath a check passes to fc.commands, so the same
   * commands run again (undefined otherwise).
   */
  replayPath?: string;
  /**
   * Whether the bridge serves a second connection while a first is open, as found once before
   * the checks (undefined where not probed).
   */
  concurrentConnections?: boolean;
  /** Whether a token was configured (the token itself stays in the harness). */
  tokenConfigured: boolean;
  /** The run's account of accepted and completed commands (absent outside a run). */
  ledger?: CommandLedger;
  /** How long this check has waited for completions (the run's total is the ledger's). */
  waitedMs: number;
  /**
   * State cells the run has not reached yet (--duration sets it after the first pass): a check that
   * reports cells aims its steps at these. Undefined: no aim, every step alike.
   */
  unreached?: readonly string[];
  /**
   * Starts measuring what slows the bridge's pace from now (machine.ts, bridgeLoss): the returned function gives the
   * milliseconds lost since, to take from a pace read off the bridge's completions.
   */
  paceLoss(): () => number;
  /**
   * Starts a bridge this tool owns afresh, so a check walks its states from the beginning (an empty
   * queue and history); false, doing nothing, at an endpoint.
   */
  fresh(): Promise<boolean>;
  /**
   * A fresh connection; its transcript joins the current case's. Connections are one at a
   * time (a bridge may serve only one): opening one closes the others unless `alongside`.
   */
  connect(options?: { alongside?: boolean }): Promise<Connection>;
  /** A fresh connection, authorized when a token is configured (one at a time, as connect). */
  session(): Promise<Connection>;
  /** An auth request carrying the configured token. */
  authRequest(id?: unknown): object;
  /** The configured token, for checks that derive near misses from it (never shown: the harness redacts it). */
  token(): string;
  /** Sends one request (object, text or bytes; a line feed is added to objects and text) and reads one reply, judging its envelope. */
  call(conn: Connection, request: object | string | Buffer, options?: CallOptions): Promise<Reply>;
  /** Judges a response line read raw (framing, UTF-8, envelope, id echo); throws a violation Fault. */
  judge(raw: Buffer, expectId: unknown): Response;
  /** Reads one reply, judging its envelope. */
  read(conn: Connection, options?: ReadOptions): Promise<Reply>;
  /** Runs a property over generated cases; shrinks the first failure. */
  property<T>(
    arbitrary: fc.Arbitrary<T>,
    judge: (input: T) => Promise<Finding>,
    options?: PropertyOptions<T>,
  ): Promise<Finding>;
  /** Whether the bridge answers ping on a fresh connection; restarts a bridge this tool owns when it does not. */
  alive(): Promise<boolean>;
}

/**
 * Why a check stopped before its own verdict. The kind alone decides the verdict
 * (VERDICT_OF below), so every layer agrees on what a fault means.
 */
export type FaultKind =
  | "violation" // a reply broke a rule, whatever the check was about
  | "unserved" // no reply where the contract promises one
  | "target-lost" // the bridge stopped accepting connections
  | "inconclusive" // a duty the check depends on (completions, replies) stopped after an earlier fault
  | "config" // the harness cannot judge as configured (e.g. the token)
  | "deadline"; // the check ran out of time

export const VERDICT_OF: Record<FaultKind, Verdict> = {
  violation: "fail",
  unserved: "fail",
  "target-lost": "fail",
  inconclusive: "error",
  config: "error",
  deadline: "error",
};

export class Fault extends Error {
  constructor(
    readonly kind: FaultKind,
    message: string,
    readonly detail: { rule?: RuleId; expected?: string; actual?: string; oracle?: Oracle } = {},
  ) {
    super(message);
  }
}

/**
 * A reply broke `rule`. Without an `oracle`, what broke is the framing or the envelope, which
 * every reply is judged by: any well-formed reply meets the rule.
 */
export const violation = (rule: RuleId, message: string, expected: string, actual: string, oracle?: Oracle) =>
  new Fault("violation", message, { rule, expected, actual, ...(oracle ? { oracle } : {}) });

/** The one place a thrown fault becomes a finding. */
export function findingOf(err: unknown): Finding {
  if (!(err instanceof Fault)) {
    return { verdict: "error", message: `harness fault: ${err instanceof Error ? err.message : String(err)}` };
  }
  const { rule, expected, actual } = err.detail;
  return {
    verdict: VERDICT_OF[err.kind],
    message: err.message,
    ...(expected !== undefined ? { expected } : {}),
    ...(actual !== undefined ? { actual } : {}),
    ...(rule ? { rules: [rule] } : {}),
    ...(err.kind === "inconclusive" ? { unjudged: { cause: "stopped" as const } } : {}),
    ...(err.kind === "deadline" ? { unjudged: { cause: "deadline" as const } } : {}),
    // A reply that broke the framing or the envelope, or none where one is due: any well-formed reply meets the rule.
    ...(err.detail.oracle
      ? { oracle: err.detail.oracle }
      : err.kind === "violation" || err.kind === "unserved"
        ? { oracle: { kind: "answered" as const } }
        : {}),
  };
}

export const pass = (message: string): Finding => ({ verdict: "pass", message });
/** The check could not bring the bridge to the state it judges: no verdict either way. */
export const skip = (message: string): Finding => ({ verdict: "skip", message, reasonKind: "out-of-reach" });
export const fail = (message: string, expected: string, actual: string, rules?: RuleId[]): Finding => ({
  verdict: "fail",
  message,
  expected,
  actual,
  ...(rules ? { rules } : {}),
});
export const warn = (message: string, expected: string, actual: string, rules?: RuleId[]): Finding => ({
  verdict: "warn",
  message,
  expected,
  actual,
  ...(rules ? { rules } : {}),
});

/** A short, human description of a reply, for "actual". */
export function describeReply(reply: Reply): string {
  switch (reply.kind) {
    case "response":
      return clip(reply.raw.toString("utf8"));
    case "closed":
      return reply.partial
        ? `connection closed after ${reply.partial} bytes of an unterminated line`
        : "connection closed";
    case "reset":
      return `connection reset (${reply.code})`;
    case "timeout":
      return reply.partial
        ? `no complete line within the timeout (${reply.partial} bytes without LF)`
        : "no response within the timeout";
    case "oversized":
      return `a response line over the limit (${reply.bytes} bytes without LF so far)`;
  }
}

export function errorCode(reply: Reply): number | undefined {
  return reply.kind === "response" ? reply.response.error?.code : undefined;
}

export function clip(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** A well-formed request object. */
export function rpc(method: string, params: Record<string, unknown> = {}, id: unknown = method) {
  return { jsonrpc: shipped.jsonrpc, id, method, params };
}

/** The result of a response reply, or undefined. */
export function resultOf(reply: Reply): Record<string, unknown> | undefined {
  if (reply.kind !== "response" || reply.response.error) return undefined;
  const r = reply.response.result;
  return typeof r === "object" && r !== null && !Array.isArray(r) ? (r as Record<string, unknown>) : undefined;
}
