// Every oracle kind, defined once: its shape, its JSON Schema in the report, how a reproducer
// prints it and what its judgement asks of the replay. The reproducer's runtime
// (runner/reproducer.py) judges each kind from its table ORACLES, which a test holds to this one.
import { type Assertion, assertionText } from "./assertion.js";

/** An error whose code is one of `codes` (empty: any code); `orClose`: a close (or reset) instead; `orSilence`: no reply. */
export type ErrorOracle = { kind: "error"; codes: number[]; orClose?: boolean; orSilence?: boolean };
/** A result object: each member of `equals` that JSON value, each of `positiveIntegers` an integer above 0, meeting `expect`. */
export type ResultOracle = {
  kind: "result";
  equals?: Record<string, unknown>;
  positiveIntegers?: string[];
  expect?: Assertion[];
};
/** A response (result or error) that meets every assertion. */
export type ReplyOracle = { kind: "reply"; expect: Assertion[]; orClose?: boolean };
/** A reply at all, one the framing and envelope judge accepts (it broke the framing, or never came). */
export type AnsweredOracle = { kind: "answered" };
/** The request's lines are answered one reply each, their ids in this order. */
export type OrderOracle = { kind: "order"; ids: unknown[]; nothingMore?: boolean };
/** No reply of the case answers a request with this id (bytes that must never run as a request). */
export type NeverOracle = { kind: "never"; id: unknown };
/**
 * The acts with these request ids (the last one judged) each complete exactly once, as
 * {commandSeq: integer, success: boolean, message: string}, read from events after the latestSeq of
 * the reply to `after` (or from 0); an act rejected with one of `orCodes` needs none. With `step`,
 * the look for a second completion lasts until an act with these params, sent once all are seen, completes.
 */
export type CompletesOracle = {
  kind: "completes";
  acts: unknown[];
  after?: unknown;
  orCodes?: number[];
  step?: Record<string, unknown>;
};
/**
 * What was outstanding when the bridge served the judged act or status, counted as the check's
 * ledger does from the latestSeq in the reply to `start` (see docs/ARCHITECTURE.md): an act is
 * accepted only below maxQueuedCommands (from the reply to `limitFrom`) and rejected only with one
 * of `codes` at it; status.queuedCommands lies within what was outstanding.
 */
export type LedgerOracle = {
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
};
/** `count` connections one after another (never two at once), each authorized where a token is set, each served a ping. */
export type ReconnectsOracle = { kind: "reconnects"; count: number };
/** After the case, the bridge still answers ping with {ok:true} on a fresh connection (the liveness probe). */
export type AliveOracle = { kind: "alive" };

/** What every kind may carry besides its own fields. */
export interface OracleCommon {
  /** The id of the request whose first reply is judged (the last such request), else the case's last request. */
  at?: unknown;
  /** The case reads events made before it: the reproducer first acts {"type": "conformance.noop"} until latestSeq reaches this. */
  needsEvents?: number;
  /** The near misses of the token the case sent, in order, as descriptions (generators/tokenNearMiss), applied to the token given. */
  nearMisses?: Record<string, unknown>[];
  /** The case polled: the reproducer re-sends the judged request until its reply meets these (or twice its timeout passes). */
  until?: Assertion[];
}

/**
 * How a failing check judged the reply, in terms a program outside this tool can apply (an
 * exported reproducer): the first reply to the request `at`, after the framing and envelope judge.
 */
export type Oracle = OracleCommon &
  (
    | ErrorOracle
    | ResultOracle
    | ReplyOracle
    | AnsweredOracle
    | OrderOracle
    | NeverOracle
    | CompletesOracle
    | LedgerOracle
    | ReconnectsOracle
    | AliveOracle
  );

export type OracleKindName = Oracle["kind"];

/** One kind's definition. */
export interface OracleKind<O extends Oracle> {
  /** Its variant in the JSON report's schema (reports/report.schema.json holds the same, a test says so). */
  schema: object;
  /** What it asks, as a reproducer prints it. */
  text(o: O): string;
  /** The request judged where `at` is not given (else the case's last). */
  judgedId?(o: O): unknown;
  /** How many replies to the judged request are read (else one, or as many as were recorded). */
  replies?(o: O): number;
  /** Where the replay may not reach the judged state (the reproducer then says COULD NOT REPLAY, exit 2): how that shows. */
  notReplayed?(o: O): string | undefined;
  /** The same judgement from an earlier reply on, for a report that left out what came between. */
  restarted?(o: O): O | undefined;
}

const either = (codes: number[]) => (codes.length ? `code ${codes.join(" or ")}` : "any code");
const ids = (list: unknown[]) => list.map((id) => JSON.stringify(id)).join(", ");
const integers = { type: "array", items: { type: "integer" } };
const assertions = { type: "array", items: { type: "object" } };
const variant = (kind: string, required: string[], properties: object, description?: string) => ({
  type: "object",
  required: ["kind", ...required],
  properties: { kind: { const: kind }, ...properties },
  ...(description ? { description } : {}),
});

export const ORACLES: { readonly [K in OracleKindName]: OracleKind<Extract<Oracle, { kind: K }>> } = {
  error: {
    schema: variant("error", ["codes"], {
      codes: { ...integers, description: "empty: any code" },
      orClose: { type: "boolean", description: "a close (or reset) of the connection is allowed too" },
      orSilence: { type: "boolean", description: "no reply at all is allowed too" },
    }),
    text: (o) =>
      `an error with ${either(o.codes)}${o.orClose ? ", or the connection closed" : ""}${o.orSilence ? ", or no reply" : ""}`,
  },
  result: {
    schema: variant("result", [], {
      equals: { type: "object", description: "members of the result and the JSON values they hold" },
      positiveIntegers: { type: "array", items: { type: "string" } },
      expect: assertions,
    }),
    text: (o) =>
      `a result${o.equals ? ` holding ${JSON.stringify(o.equals)}` : ""}${
        o.positiveIntegers ? ` with ${o.positiveIntegers.join(", ")} an integer above 0` : ""
      }${o.expect ? `, and ${o.expect.map(assertionText).join("; ")}` : ""}`,
  },
  reply: {
    schema: variant("reply", ["expect"], {
      expect: {
        ...assertions,
        description: "assertions on the response: is, equals, op/than, every, ascending, anyOf at a path",
      },
    }),
    text: (o) => `${o.expect.map(assertionText).join("; ")}${o.orClose ? ", or the connection closed" : ""}`,
  },
  answered: {
    schema: variant("answered", [], {}, "a reply the framing and envelope judge accepts"),
    text: () => "a well-formed reply",
  },
  order: {
    schema: variant(
      "order",
      ["ids"],
      { ids: { type: "array" }, nothingMore: { type: "boolean", description: "and no line after them" } },
      "one reply per line of the request, their ids in this order",
    ),
    text: (o) =>
      `one reply per line, their ids in order: ${ids(o.ids)}${o.nothingMore ? ", and no line after them" : ""}`,
    replies: (o) => o.ids.length,
  },
  never: {
    schema: variant("never", ["id"], { id: {} }, "no reply of the case answers a request with this id"),
    text: (o) => `no reply answers the request with id ${JSON.stringify(o.id)}`,
  },
  completes: {
    schema: variant(
      "completes",
      ["acts"],
      {
        acts: { type: "array" },
        after: {},
        orCodes: integers,
        step: {
          type: "object",
          description:
            "the params of an act sent once every completion is seen: the look for a second one lasts until it completes, a step of the game loop",
        },
      },
      "each accepted act completes exactly once, well-formed",
    ),
    text: (o) =>
      `each accepted act (${ids(o.acts)}) completes exactly once as {commandSeq: integer, success: boolean, message: string}${
        o.orCodes?.length ? `, unless rejected with ${o.orCodes.join(" or ")}` : ""
      }${o.step ? `, looking for a second completion until an act of ${JSON.stringify(o.step)} completes` : ""}`,
    // It judges the act, however long the case then waited.
    judgedId: (o) => o.acts.at(-1),
  },
  ledger: {
    schema: variant(
      "ledger",
      ["judge", "start", "limitFrom", "codes"],
      {
        judge: { enum: ["act", "status", "flood"] },
        start: {},
        limitFrom: {},
        codes: integers,
        more: { type: "integer", description: "then up to this many acts, judged alike" },
        act: { type: "object", description: "the params of those acts" },
        fromStart: {
          type: "boolean",
          description: "the judged reply is the start: every act judged is the reproducer's",
        },
      },
      "what was outstanding when the judged act or status was served, counted from the replies",
    ),
    text: (o) =>
      o.judge === "flood"
        ? `acts until the queue is full, each accepted only with fewer than maxQueuedCommands outstanding and rejected (${o.codes.join(" or ")}) only with that many; then every accepted command completes`
        : o.judge === "act"
          ? `act accepted only with fewer than maxQueuedCommands outstanding, and rejected (${o.codes.join(" or ")}) only with that many`
          : "status.queuedCommands within the accepted commands not yet completed, and not above maxQueuedCommands",
    // A queue's edge shows only while commands are outstanding, which a replay's timing may miss.
    notReplayed: (o) => (o.judge === "status" ? undefined : "the queue never filled"),
    // A ledger can start over from where it opened: every act it then judges is the reproducer's.
    restarted: (o) => (o.fromStart ? undefined : { ...o, at: o.start, fromStart: true }),
  },
  reconnects: {
    schema: variant(
      "reconnects",
      ["count"],
      { count: { type: "integer" } },
      "connections one after another, each served a ping",
    ),
    text: (o) => `${o.count} connections one after another, each served a ping`,
  },
  alive: {
    schema: variant("alive", [], {}, "the bridge still answers ping on a fresh connection after the case"),
    text: () => "the bridge still answers ping on a fresh connection after the case",
  },
};

/** The definition of an oracle's kind, typed for that oracle. */
export const kindOf = <O extends Oracle>(o: O): OracleKind<O> => ORACLES[o.kind] as unknown as OracleKind<O>;

/** The oracle as a reproducer prints it. */
export const oracleText = (o: Oracle): string => kindOf(o).text(o);

/** The report schema's `oneOf` of oracles: every kind's variant, in the registry's order. */
export const oracleSchemas = (): object[] => Object.values(ORACLES).map((k) => k.schema);
