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
}
