// The verdict model every layer shares: checks reach verdicts, the runner aggregates them,
// reporters show them.

export type Verdict = "pass" | "fail" | "warn" | "skip" | "error";

/** Worst first: a rule's verdict is the worst of its checks'. */
export const VERDICT_ORDER: readonly Verdict[] = ["fail", "error", "warn", "pass", "skip"];

export const worst = (a: Verdict, b: Verdict): Verdict =>
  VERDICT_ORDER.indexOf(a) <= VERDICT_ORDER.indexOf(b) ? a : b;

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

/** A place in a JSON value: member names and array indexes; "#" stands for an array's length. */
export type JsonPath = readonly (string | number)[];

/**
 * What an assertion compares with: a JSON value, the value at `path` in the reply to the last
 * earlier request whose id is `ref` (or in the judged reply itself), or the endpoint the
 * reproducer connects to.
 */
export type Operand =
  | { value: unknown }
  | { ref: unknown; path?: JsonPath }
  /** The value at this path in the judged response itself. */
  | { here: JsonPath }
  /** The value at `path` in the reply to this request, sent when the assertion is judged (what holds now). */
  | { fresh: { method: string; params?: Record<string, unknown> }; path?: JsonPath }
  /** The address or port of the connection the judged reply came on: the endpoint as connected. */
  | { peer: "address" | "port" };

/**
 * One thing a reply must hold, at `path` in the judged response (with `of`, in the reply to the
 * last earlier request with that id; inside `every`, in each item).
 */
export type Assertion = { path?: JsonPath; of?: unknown } & (
  | { is: "integer" | "number" | "boolean" | "string" | "object" | "array" | "present" | "absent" }
  | { equals: unknown }
  /** Numbers compared by value (`plus` added to the right-hand side); == and != compare any JSON values. */
  | { op: "==" | "!=" | "<" | "<=" | ">" | ">="; than: Operand; plus?: number }
  | { every: Assertion[] }
  | { ascending: JsonPath }
  /** The array is the start of the operand's array (items compared at `by`, or whole). */
  | { prefixOf: Operand; by?: JsonPath }
  /** A string naming the address connected to: that address, a wildcard bind address, or a name resolving to it. */
  | { namesPeer: true }
  /** At least one of these lists holds whole. */
  | { anyOf: Assertion[][] }
);

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
 * How a failing check judged the reply, in terms a program outside this tool can apply (an
 * exported reproducer). It applies to the first reply to the request with id `at` (the last such
 * request of the case), or else to the case's last request, before the liveness probe where one
 * follows; that reply first passes the framing and envelope judge, and what the case did after it
 * is not part of the judgement.
 */
export type Oracle =
  /**
   * An error whose code is one of `codes` (empty: any code); with `orClose`, the connection
   * closed (or reset) instead is allowed too; with `orSilence`, no reply at all.
   */
  (
    | { kind: "error"; codes: number[]; orClose?: boolean; orSilence?: boolean }
    /**
     * A result object: each member of `equals` holds that JSON value (same JSON type), each name in
     * `positiveIntegers` an integer above 0, and the response meets `expect`.
     */
    | { kind: "result"; equals?: Record<string, unknown>; positiveIntegers?: string[]; expect?: Assertion[] }
    /** A response (result or error) that meets every assertion. */
    | { kind: "reply"; expect: Assertion[]; orClose?: boolean }
    /** A reply at all, one the framing and envelope judge accepts (it broke the framing, or never came). */
    | { kind: "answered" }
    /** The request's lines are answered one reply each, their ids in this order. */
    | { kind: "order"; ids: unknown[]; nothingMore?: boolean }
    /** No reply of the case answers a request with this id (bytes that must never run as a request). */
    | { kind: "never"; id: unknown }
    /**
     * The acts with these request ids (the last one judged) each complete exactly once, as
     * {commandSeq: integer, success: boolean, message: string}, found by reading events after the
     * latestSeq of the reply to `after` (or from 0); an act rejected with one of `orCodes` needs none.
     * With `step`, the look for a second completion lasts until an act with these params, sent once
     * all are seen, completes: one step of the game loop.
     */
    | { kind: "completes"; acts: unknown[]; after?: unknown; orCodes?: number[]; step?: Record<string, unknown> }
    /**
     * What was outstanding when the bridge served the judged act or status, counted as the check's
     * ledger does from the latestSeq in the reply to `start`: acts accepted, completions read in
     * every events reply since, and a poll of events right after the judged reply. An act is
     * accepted only with fewer than maxQueuedCommands (from the reply to `limitFrom`) outstanding
     * and rejected only with one of `codes` when that many are; status.queuedCommands lies within
     * what was outstanding. A queue's edge shows only while commands are outstanding, which a
     * replay's timing may miss: so the check's own pace follows, `more` acts judged alike.
     */
    | {
        kind: "ledger";
        /** "flood": the judged reply is the start, and the acts that follow are the reproducer's, all judged; then each accepted one completes. */
        judge: "act" | "status" | "flood";
        start: unknown;
        limitFrom: unknown;
        codes: number[];
        /** Then, as the check went on: up to this many acts with params `act` (each followed by a status where one is judged). */
        more?: number;
        act?: Record<string, unknown>;
        /** The judged reply is the one to `start`: the acts judged are all the reproducer's own. */
        fromStart?: boolean;
      }
    /** `count` connections one after another (never two at once), each authorized where a token is set, each served a ping. */
    | { kind: "reconnects"; count: number }
    /** After the case, the bridge still answers ping with {ok:true} on a fresh connection (the liveness probe). */
    | { kind: "alive" }
  ) & {
    at?: unknown;
    /**
     * The case reads events made before it (by the check, outside the case): the reproducer first
     * acts {"type": "conformance.noop"} and waits until latestSeq reaches this.
     */
    needsEvents?: number;
    /**
     * The near misses of the token the case sent, in order, as descriptions (generators/tokenNearMiss):
     * the report hides them, and a reproducer applies them to the token it is given.
     */
    nearMisses?: Record<string, unknown>[];
    /** The case polled: the reproducer re-sends the judged request until its reply meets these (or twice its timeout passes). */
    until?: Assertion[];
  };

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
