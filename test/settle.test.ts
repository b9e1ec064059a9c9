import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INTEGER_FIELDS, type JsonObject, ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import { type Check, pass } from "../suites/harness/check.js";
import { classesFirst } from "../suites/harness/classes.js";
import { allChecks } from "../suites/index.js";
import { runSuite } from "./helpers.js";

// Class cases judged together (PropertyOptions.settle): the commands of the typed checks' classes share the game
// loop's turns, and the cases a settle leaves run alone on a fresh bridge, in their usual place.

/** Takes any value in an integer field and completes the command (conformant), noting the most queued at once. */
class DeepestQueue extends ReferenceBridge {
  static deepest = 0;
  protected override commandProblem(command: JsonObject): string | undefined {
    return super.commandProblem(
      Object.fromEntries(Object.entries(command).filter(([k]) => !INTEGER_FIELDS.includes(k))),
    );
  }
  protected override act(params: JsonObject) {
    const reply = super.act(params);
    DeepestQueue.deepest = Math.max(DeepestQueue.deepest, this.queue.length);
    return reply;
  }
}

describe("a typed check's class cases", () => {
  it("are acted together where the queue and the history hold several, and the reference bridge passes", async () => {
    DeepestQueue.deepest = 0;
    const report = await runSuite(
      (token) => new DeepestQueue({ token, maxQueuedCommands: 16, maxEvents: 40, drainIntervalMs: 5 }),
      { checks: allChecks.filter((c) => c.id === "command.x/typed"), timeoutMs: 400, profile: "quick" },
    );
    const rule = report.rules.find((r) => r.id === `${contract.prefix}.command.x`)!;
    expect(rule.verdict).toBe("pass");
    // One at a time, a case's command is the only one queued: together, a chunk waits in the queue.
    expect(DeepestQueue.deepest).toBeGreaterThan(1);
  });
});

/** Runs a property of four classes whose settle settles `settled` of the three after the first: what ran alone. */
async function settling(settled: number) {
  const ran: number[] = [];
  let settles = 0;
  let bridges = 0;
  const check: Check = {
    id: "method.ping/settle-probe",
    rules: ["method.ping"],
    description: "a property whose leading classes settle together",
    run: (ctx) =>
      ctx.property(
        fc.constant(0),
        async (n) => {
          ran.push(n);
          return pass("ok");
        },
        {
          ...classesFirst([1, 2, 3, 4], 0),
          settle: async (examples) => {
            expect(examples).toEqual([2, 3, 4]); // the first class runs alone, before the others settle
            settles++;
            await ctx.session(); // the settle touched the bridge
            return settled;
          },
        },
      ),
  };
  const report = await runSuite(
    (token) => {
      bridges++;
      return new ReferenceBridge({ token });
    },
    { checks: [check], timeoutMs: 400, profile: "quick" },
  );
  expect(report.rules.find((r) => r.id === `${contract.prefix}.method.ping`)?.verdict).toBe("pass");
  expect(settles).toBe(1);
  return { ran, bridges };
}

describe("a property's settle", () => {
  it("skips the cases it settled and runs the rest alone, on a bridge started afresh", async () => {
    const all = await settling(3);
    expect(all.ran).toEqual([1]);
    const some = await settling(1);
    expect(some.ran).toEqual([1, 3, 4]);
    // One bridge more than where every class settled: the one the unsettled cases run on.
    expect(some.bridges).toBe(all.bridges + 1);
  });
});
