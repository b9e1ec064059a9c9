// The verdict model every layer shares: checks reach verdicts, the runner aggregates them,
// reporters show them.

export type { Assertion, JsonPath, Operand } from "./assertion.js";
export type { Oracle } from "./oracles.js";

export type Verdict = "pass" | "fail" | "warn" | "skip" | "error";

/** Worst first: a rule's verdict is the worst of its checks'. */
export const VERDICT_ORDER: readonly Verdict[] = ["fail", "error", "warn", "pass", "skip"];

export const worst = (a: Verdict, b: Verdict): Verdict =>
  VERDICT_ORDER.indexOf(a) <= VERDICT_ORDER.indexOf(b) ? a : b;

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
