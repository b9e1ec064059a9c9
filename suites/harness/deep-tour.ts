// The seed sequences of the deep check (as AFLNet keeps message sequences as seeds): one short
// sequence per family of state cells, run before the generated ones, so every family is walked
// once in every run that can afford it, and a fault there is found at once.

import { SAME_ID_METHODS, type Step } from "../../generators/sessionStep.js";
import { BURST_KIB, CHURN_CONNECTIONS, ENDED_CONNECTIONS, READ_BOUNDARIES_KIB } from "./cells.js";

/** The seed sequences; `types` are the advertised command types, `two` whether races can run. */
export function tour(types: readonly string[], two: boolean): Step[][] {
  const type = types[0] ?? "conformance.deep";
  const sequences: Step[][] = [
    // First: the check's first case takes the history the checks before it filled, so it only tops it up.
    [
      { kind: "fill-history", slot: 0, extra: 3, cursor: "before-oldest" },
      { kind: "events", slot: 0, cursor: "at-oldest", limit: 2 },
      { kind: "events", slot: 0, cursor: "inside", limit: 7 },
      { kind: "events", slot: 0, cursor: "past-newest", limit: 1 },
      { kind: "act", slot: 0, command: { type } },
    ],
    [
      { kind: "fill-queue", slot: 0 },
      { kind: "status", slot: 0 },
    ],
    [
      { kind: "reconnect", slot: 0, authorize: false },
      { kind: "auth", slot: 0, right: false, times: 3 },
      { kind: "status", slot: 0 },
      { kind: "auth", slot: 0, right: true, times: 1 },
      { kind: "auth", slot: 0, right: false, times: 1 },
      { kind: "status", slot: 0 },
    ],
    [
      { kind: "appends", slot: 0, count: 3, type },
      ...[...types, "conformance.unknown"].map((t): Step => ({ kind: "act", slot: 0, command: { type: t } })),
      {
        kind: "act",
        slot: 0,
        command: { type, x: Number.MAX_SAFE_INTEGER, targetId: "", stringArg: "\u{1d11e}\u0000" },
        extreme: ["integer", "identifier", "string"],
      },
    ],
    [
      { kind: "ping", slot: 0, ids: ["s", 7, 1.5, null], repeat: false },
      { kind: "ping", slot: 0, ids: [true, { a: 1 }, [1]], repeat: true },
      { kind: "same-id", slot: 0, id: "same", methods: [...SAME_ID_METHODS], across: true },
    ],
    [
      { kind: "long-line", slot: 0, kibs: [...READ_BOUNDARIES_KIB], char: "\u00e9" },
      { kind: "split-char", slot: 0, char: "\u{1d11e}" },
      { kind: "half-close", slot: 0 },
      { kind: "partial-close", slot: 0, text: '{"jsonrpc":"2.0","id":"\u00e9' },
      // Each size once: the 1 MiB write is the costliest single step of the tour.
      { kind: "burst", slot: 0, kibs: [...BURST_KIB] },
    ],
    [{ kind: "churn", count: CHURN_CONNECTIONS }],
    [{ kind: "endings", count: ENDED_CONNECTIONS }],
  ];
  if (two)
    sequences.push([
      { kind: "race-acts", count: 3 },
      { kind: "race-observe" },
      { kind: "race-status" },
      { kind: "status", slot: 1 },
    ]);
  return sequences;
}
