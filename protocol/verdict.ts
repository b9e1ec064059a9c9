// The verdict model every layer shares: checks reach verdicts, the runner aggregates them,
// reporters show them.

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
  rest?: { run: string; times: number; tail: string };
}

/**
 * How a failing check judged the reply, in terms a program outside this tool can apply (an
 * exported reproducer). It applies to the first reply to the case's last request, before the
 * liveness probe where one follows; that reply first passes the framing and envelope judge.
 */
export type Oracle =
  /** An error whose code is one of `codes`; with `orClose`, the connection closed (or reset) instead is allowed too. */
  | { kind: "error"; codes: number[]; orClose?: boolean }
  /**
   * A result object: each member of `equals` holds that JSON value (same JSON type), each name in
   * `positiveIntegers` an integer above 0.
   */
  | { kind: "result"; equals?: Record<string, unknown>; positiveIntegers?: string[] }
  /** After the case, the bridge still answers ping with {ok:true} on a fresh connection (the liveness probe). */
  | { kind: "alive" };
