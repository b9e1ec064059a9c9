import { describe, expect, it } from "vitest";
import { type BridgeOptions, boundedMessage, MAX_MESSAGE_BYTES, ReferenceBridge } from "../bridges/reference/bridge.js";
import { problems, runSuite } from "./helpers.js";

// The whole suite against the reference bridge at the smallest legal sizes and with a slow game loop:
// a conformant bridge passes every check whatever limits it advertises, so nothing may fail, error or warn.
const SIZES: [string, BridgeOptions][] = [
  ["queue 1, history 1", { maxQueuedCommands: 1, maxEvents: 1 }],
  ["queue 2, history 3", { maxQueuedCommands: 2, maxEvents: 3 }],
  ["queue 64, history 1", { maxQueuedCommands: 64, maxEvents: 1 }],
  ["a slow game loop (150 ms a command)", { maxQueuedCommands: 16, maxEvents: 8, drainIntervalMs: 150 }],
];

describe("the reference bridge at small legal limits", () => {
  it.each(SIZES)(
    "passes every check with %s",
    async (_name, options) => {
      const report = await runSuite((token) => new ReferenceBridge({ token, ...options }), {
        runs: 8,
        timeoutMs: 1000,
      });
      expect(problems(report)).toEqual([]);
      expect(report.rules.filter((r) => r.verdict === "warn").map((r) => r.id)).toEqual([]);
    },
    45_000,
  );
});

describe("the reference bridge's bounded completion messages", () => {
  const jsonBytes = (t: string) => Buffer.byteLength(JSON.stringify(t)) - 2;

  it("keeps a short message as it is", () => {
    expect(boundedMessage("moved")).toBe("moved");
    const exact = "x".repeat(MAX_MESSAGE_BYTES);
    expect(boundedMessage(exact)).toBe(exact);
  });

  it("cuts a long one at a character boundary, escapes counted, and marks the cut", () => {
    for (const unit of ["x", "é", "𝄞", "\u0001", '"']) {
      const cut = boundedMessage(unit.repeat(MAX_MESSAGE_BYTES + 1));
      expect(jsonBytes(cut)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
      expect(cut.endsWith("…")).toBe(true);
      expect([...cut.slice(0, -1)].every((ch) => ch === unit)).toBe(true);
      expect(jsonBytes(cut)).toBeGreaterThan(MAX_MESSAGE_BYTES - jsonBytes(unit) - jsonBytes("…"));
    }
  });
});
