import fc from "fast-check";
import { type Command, command } from "./command.js";
import { extremeCommand } from "./extremeCommand.js";

/** Which of the two connections of the model a step uses. */
export type Slot = 0 | 1;

/** Where an events step puts its cursor, relative to the retained window it reads first. */
export type CursorAim = "zero" | "before-oldest" | "at-oldest" | "inside" | "at-newest" | "past-newest";

/** One step of a deep session, described rather than built, so a counterexample reads as the sequence it was. */
export type Step =
  | { kind: "act"; slot: Slot; command: Command; extreme?: string[] }
  | { kind: "appends"; slot: Slot; count: number; type: string }
  | { kind: "fill-queue"; slot: Slot }
  | { kind: "status"; slot: Slot }
  | { kind: "observe"; slot: Slot }
  | { kind: "events"; slot: Slot; cursor: CursorAim; limit: number }
  | { kind: "fill-history"; slot: Slot; extra: number; cursor: CursorAim }
  | { kind: "auth"; slot: Slot; right: boolean; times: number }
  | { kind: "reconnect"; slot: Slot; authorize: boolean }
  | { kind: "churn"; count: number }
  | { kind: "half-close"; slot: Slot }
  | { kind: "partial-close"; slot: Slot; text: string }
  | { kind: "endings"; count: number }
  | { kind: "ping"; slot: Slot; ids: unknown[]; repeat: boolean }
  | { kind: "long-line"; slot: Slot; kibs: number[]; char: string }
  | { kind: "split-char"; slot: Slot; char: string }
  | { kind: "burst"; slot: Slot; kibs: number[] }
  | { kind: "same-id"; slot: Slot; id: unknown; methods: string[]; across: boolean }
  | { kind: "race-acts"; count: number }
  | { kind: "race-observe" }
  | { kind: "race-status" };

export type StepKind = Step["kind"];

/**
 * The state family each step kind drives (the families of the cell model). A fill of the history also serves
 * the cursor's family: only a history that evicted has a cursor below its oldest event.
 */
export const STEP_FAMILY: Record<StepKind, string> = {
  act: "command",
  appends: "command",
  "fill-queue": "queue",
  status: "queue",
  observe: "conn",
  events: "cursor",
  "fill-history": "history",
  auth: "auth",
  reconnect: "conn",
  churn: "conn",
  "half-close": "conn",
  "partial-close": "conn",
  endings: "conn",
  ping: "id",
  "same-id": "id",
  "long-line": "read",
  "split-char": "read",
  burst: "read",
  "race-acts": "race",
  "race-observe": "race",
  "race-status": "race",
};

export interface SessionStepConstraints {
  /** Command types the bridge advertises; an unknown one is mixed in. Default: none. */
  types?: string[];
  /**
   * Families to aim at: their steps are drawn `aimWeight` times as often. Default: none (every step alike, but for
   * the costly ones, drawn a quarter as often).
   */
  aim?: readonly string[];
  /** How much more often an aimed family's steps are drawn (its costly ones: three times as often). Default: 6. */
  aimWeight?: number;
  /**
   * When costly steps are drawn: "always" (unaimed, 1 against 4 for most others), "aimed" (only where their family
   * is aimed at), "never". Default: "always".
   */
  costly?: "always" | "aimed" | "never";
  /** Whether the model has a second connection (the bridge serves two at once). Default: false. */
  twoConnections?: boolean;
  /** Connections opened in a row by a churn step. Default: 48. */
  churn?: number;
  /** Wrong tokens in a row an auth step may send. Default: 1 to 4. */
  maxFailures?: number;
  /** Read boundaries (KiB) a long line crosses, and that lines written together cross in total. Default: 4, 8, 16, 64. */
  boundaries?: readonly number[];
  /** Connections an endings step ends in turn, each way. Default: 64. */
  endings?: number;
}

/** Request ids of each JSON type alike: string, integer, fraction, null, boolean, object, array. */
const jsonId: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.oneof(fc.integer(), fc.maxSafeInteger()),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
  fc.constant(null),
  fc.boolean(),
  fc.dictionary(fc.constantFrom("a", "id", "\u00e9"), fc.oneof(fc.integer(), fc.string({ maxLength: 4 })), {
    maxKeys: 2,
  }),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null)), { maxLength: 3 }),
);

/**
 * Steps that cost dozens of round trips or hundreds of the game loop's turns (a history of maxEvents, 48
 * connections): drawn a quarter as often as the others, and aiming at them only doubles that.
 */
export const COSTLY: ReadonlySet<StepKind> = new Set(["fill-history", "churn", "endings"]);

/** Methods without side effects a request id can be repeated across. */
export const SAME_ID_METHODS = ["ping", "status", "observe", "events"] as const;

/** How often a step that is not costly is drawn: a fill of the queue or a drain watched costs a queue's worth of turns. */
const baseWeight = (k: StepKind): number => (k === "fill-queue" || k === "race-status" ? 2 : 4);
/** Multibyte characters a read boundary can split: 2, 3 and 4 bytes of UTF-8. */
export const SPLIT_CHARS = ["\u00e9", "\u20ac", "\u{1d11e}"] as const;

/**
 * Steps of a deep session over one or two connections: acts of every kind (extreme fields,
 * chains of appends), queue and history fills, cursors at the window's edges, auth failures,
 * reconnects, half-closes, connections ended every way, unusual ids and one id across methods,
 * lines across read boundaries or many in one write, and (with two connections) races. Weighted toward the aimed families, so a run can be steered to cells not yet reached.
 */
export function sessionStep(constraints: SessionStepConstraints = {}): fc.Arbitrary<Step> {
  const {
    types = [],
    aim = [],
    aimWeight = 6,
    costly = "always",
    twoConnections = false,
    churn = 48,
    maxFailures = 4,
    boundaries = [4, 8, 16, 64],
    endings = 64,
  } = constraints;
  const slot: fc.Arbitrary<Slot> = twoConnections ? fc.constantFrom<Slot>(0, 1) : fc.constant<Slot>(0);
  const known = [...types, "conformance.deep"];
  const cursor = fc.constantFrom<CursorAim>("zero", "before-oldest", "at-oldest", "inside", "at-newest", "past-newest");
  const steps: Record<StepKind, fc.Arbitrary<Step>> = {
    act: fc.oneof(
      fc
        .record({ slot, command: command({ types: known, maxFields: 2 }) })
        .map((s) => ({ kind: "act" as const, ...s })),
      fc
        .record({ slot, extreme: extremeCommand({ types: known }) })
        .map(({ slot, extreme }) => ({ kind: "act" as const, slot, command: extreme.command, extreme: extreme.kinds })),
    ),
    appends: fc
      .record({ slot, count: fc.integer({ min: 2, max: 4 }), type: fc.constantFrom(...known) })
      .map((s) => ({ kind: "appends" as const, ...s })),
    "fill-queue": slot.map((s) => ({ kind: "fill-queue" as const, slot: s })),
    status: slot.map((s) => ({ kind: "status" as const, slot: s })),
    observe: slot.map((s) => ({ kind: "observe" as const, slot: s })),
    events: fc
      .record({
        slot,
        cursor,
        limit: fc.constantFrom(1, 2, 7, 500),
      })
      .map((s) => ({ kind: "events" as const, ...s })),
    "fill-history": fc
      .record({ slot, extra: fc.constantFrom(0, 3), cursor })
      .map((s) => ({ kind: "fill-history" as const, ...s })),
    auth: fc
      .record({ slot, right: fc.boolean(), times: fc.integer({ min: 1, max: maxFailures }) })
      .map(({ slot, right, times }) => ({ kind: "auth" as const, slot, right, times: right ? 1 : times })),
    reconnect: fc.record({ slot, authorize: fc.boolean() }).map((s) => ({ kind: "reconnect" as const, ...s })),
    churn: fc.constant({ kind: "churn" as const, count: churn }),
    "half-close": slot.map((s) => ({ kind: "half-close" as const, slot: s })),
    "partial-close": fc
      .record({ slot, text: fc.constantFrom('{"jsonrpc":"2.0","id":1,"meth', "{", '{"jsonrpc":"2.0","id":"\u00e9') })
      .map((s) => ({ kind: "partial-close" as const, ...s })),
    endings: fc.constant({ kind: "endings" as const, count: endings }),
    "same-id": fc
      .record({
        slot,
        id: jsonId,
        methods: fc.shuffledSubarray([...SAME_ID_METHODS], { minLength: 2 }),
        across: fc.boolean(),
      })
      .map((s) => ({ kind: "same-id" as const, ...s })),
    burst: fc
      .record({ slot, kibs: fc.subarray([...boundaries], { minLength: 1 }) })
      .map((s) => ({ kind: "burst" as const, ...s })),
    ping: fc
      .record({ slot, ids: fc.array(jsonId, { minLength: 1, maxLength: 3 }), repeat: fc.boolean() })
      .map((s) => ({ kind: "ping" as const, ...s })),
    "long-line": fc
      .record({ slot, kibs: fc.subarray([...boundaries], { minLength: 1 }), char: fc.constantFrom(...SPLIT_CHARS) })
      .map((s) => ({ kind: "long-line" as const, ...s })),
    "split-char": fc
      .record({ slot, char: fc.constantFrom(...SPLIT_CHARS) })
      .map((s) => ({ kind: "split-char" as const, ...s })),
    "race-acts": fc.integer({ min: 2, max: 3 }).map((count) => ({ kind: "race-acts" as const, count })),
    "race-observe": fc.constant({ kind: "race-observe" as const }),
    "race-status": fc.constant({ kind: "race-status" as const }),
  };
  const raceless = (k: StepKind) => twoConnections || STEP_FAMILY[k] !== "race";
  const kinds = (Object.keys(steps) as StepKind[]).filter(raceless);
  const aimed = (k: StepKind) => aim.includes(STEP_FAMILY[k]) || (k === "fill-history" && aim.includes("cursor"));
  // A costly step aimed at is drawn only three times as often: one of them can take the time of dozens of others.
  const costlyWeight = (isAimed: boolean) => (costly === "never" ? 0 : isAimed ? 3 : costly === "always" ? 1 : 0);
  const weight = (k: StepKind) => (COSTLY.has(k) ? costlyWeight(aimed(k)) : baseWeight(k) * (aimed(k) ? aimWeight : 1));
  return fc.oneof(...kinds.filter((k) => weight(k) > 0).map((k) => ({ weight: weight(k), arbitrary: steps[k] })));
}
