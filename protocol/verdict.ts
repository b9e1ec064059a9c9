// The verdict model every layer shares: checks reach verdicts, the runner aggregates them,
// reporters show them.

export type { Assertion, JsonPath, Operand } from "./assertion.js";
export type { Oracle } from "./oracles.js";

export type Verdict = "pass" | "fail" | "warn" | "skip" | "error";

/** Worst first: a rule's verdict is the worst of its checks'. */
export const VERDICT_ORDER: readonly Verdict[] = ["fail", "error", "warn", "pass", "skip"];

export const worst = (a: Verdict, b: Verdict): Verdict =>
  VERDICT_ORDER.indexOf(a) <= VERDICT_ORDER.indexOf(b) ? a : b;

/** Why a rule or a check has no verdict of its own (skip), or could not be judged (error not of its rule's making). */
export const REASON_KINDS = [
  /** Left out of this run: --rules / --skip, --check, a replay. */
  "not-chosen",
  /** Checked in another shard (--shard I/N). */
  "other-shard",
  /** Client mode: a rule only bridges are bound by. */
  "bridge-duty",
  /** Observed other than on the wire: no check can see it. */
  "not-observable",
  /** No check of this version of the tool covers it (an error). */
  "uncovered",
  /** A stopped run did not reach it (--bail, --max-failures, Ctrl-C). */
  "not-run",
  /** No check could run: the target was unreachable, a token is missing. */
  "blocked",
  /** An earlier root cause elsewhere (the bridge stopped serving, a rule left out failed): nothing is said of this rule. */
  "inconclusive",
  /** The check judged another rule (it stopped at, or ended with, a finding there). */
  "not-judged",
  /** The check could not bring the bridge to the state it judges (no token, a history that kept changing). */
  "out-of-reach",
] as const;
export type ReasonKind = (typeof REASON_KINDS)[number];

/**
 * Why a check reached no verdict of its own for a cause outside the rules it judges: what it needs
 * stopped after an earlier root cause (`after`: the check, or "preflight"), or its deadline cut it
 * short. Such a check turns a rule `error` only where no other check judged that rule.
 */
export type Unjudged = { cause: "stopped"; after?: string } | { cause: "deadline" };

/** One entry of the exact exchange with a peer, as reports show it. */
export interface TranscriptEntry {
  dir: "send" | "recv" | "event";
  /** Milliseconds since the case began. */
  t: number;
  /** Bytes as UTF-8 text, or base64 where they are not valid UTF-8. */
  text?: string;
  base64?: string;
  /** Length of the bytes on the wire (text may be cut to the transcript limit). */
  length: number;
  truncated?: true;
  /** Offsets at which a send's bytes were cut into separate writes, each a TCP segment of its own. */
  cuts?: number[];
  /** With `cuts`: the pause between those writes in milliseconds (absent: a turn of the event loop). */
  pauseMs?: number;
  /**
   * A truncated send's bytes past those kept, where they are one short run repeated and then a
   * short tail (both base64): with them the whole send is known.
   */
  rest?: Rest;
}

/**
 * Bytes past those a transcript keeps: `run` (base64) `times` over, then (where `then` is set) the
 * bytes `then` describes, else `tail` (base64): a long send of a few repeated runs, kept exactly.
 */
export interface Rest {
  run: string;
  times: number;
  tail: string;
  then?: Rest;
}

/**
 * A check not judged on its own input: the plain form of it (the command without the field tested, or a
 * plain bad command) already broke `rule` (a short rule ID), which the finding fails instead.
 */
export interface RootCause {
  rule: string;
  /** The plain form as sent: act's params, or the request of a connection that never sent auth. */
  plain: Record<string, unknown>;
}

/** A recorded case run again exactly (a replay, the corpus, --last-failed): seed, path and commands, and what it showed. */
export interface ReplayedCase {
  seed: number;
  path?: string;
  replayPath?: string;
  /** Cases per property when the case was found. */
  runs?: number;
  /** Passes in a row asked of a rechecked case before it counts as fixed. */
  tries?: number;
  verdict: Verdict;
  /** The case as it ran. */
  case?: string;
}
