import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import {
  type BridgeOptions,
  boundedMessage,
  type Json,
  type JsonObject,
  MAX_MESSAGE_BYTES,
  ReferenceBridge,
} from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import type { Reporter } from "../reports/types.js";
import { historyFillsOnce } from "../runner/run.js";
import { embeddedTarget } from "../runner/targets.js";
import { type Check, pass, resultOf, rpc } from "../suites/harness/check.js";
import { collectCompletions, latestSeq } from "../suites/harness/events.js";
import { Harness } from "../suites/harness/harness.js";
import { act, judgeCompletion } from "../suites/harness/lifecycle.js";
import { allChecks } from "../suites/index.js";
import { Ledger } from "../suites/integration/bounded-state.js";
import { problems, runSuite, TEST_TOKEN } from "./helpers.js";

// The whole suite against the reference bridge at the smallest legal sizes and with a slow game loop:
// a conformant bridge passes every check whatever limits it advertises, so nothing may fail, error or warn.
const SIZES: [string, BridgeOptions][] = [
  ["queue 1, history 1", { maxQueuedCommands: 1, maxEvents: 1 }],
  ["queue 2, history 3", { maxQueuedCommands: 2, maxEvents: 3 }],
  ["queue 64, history 1", { maxQueuedCommands: 64, maxEvents: 1 }],
  ["a slow game loop (150 ms a command)", { maxQueuedCommands: 16, maxEvents: 8, drainIntervalMs: 150 }],
];

// Each run has its own bridge and mostly waits on its game loop (the slow one most of all): they run side by side.
describe.concurrent("the reference bridge at small legal limits", () => {
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

// Every run above keeps a history smaller than the events clamp's upper edge, where limit-max skips. Here the history
// holds more, so the check makes events past the edge and must pass: at the default game loop's pace within the
// profile's time budget, and through a one-command queue.
const EDGE = contract.limits.eventsLimitMax;
const LARGE: [string, BridgeOptions][] = [
  [`history ${EDGE + 100}, the default queue and game loop`, { maxEvents: EDGE + 100 }],
  [`history ${EDGE + 20}, queue 1`, { maxEvents: EDGE + 20, maxQueuedCommands: 1, drainIntervalMs: 2 }],
];

describe("the events clamp's upper edge on a history larger than it", () => {
  it.each(LARGE)(
    "the reference bridge passes method.events/limit-max with %s",
    async (_name, options) => {
      const report = await runSuite((token) => new ReferenceBridge({ token, ...options }), {
        checks: allChecks.filter((c) => c.id === "method.events/limit-max"),
      });
      const rule = report.rules.find((r) => r.id === `${contract.prefix}.method.events`)!;
      const check = rule.checks.find((c) => c.id === "method.events/limit-max")!;
      expect(check.verdict, check.message).toBe("pass");
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

/** Completes its whole queue in one tick: with a one-event history, all but the newest completion drop unread. */
class BurstBridge extends ReferenceBridge {
  protected override drainOne(): void {
    while (this.queue.length) super.drainOne();
  }
}

/** Accepts commands and never completes them. */
class SilentBridge extends ReferenceBridge {
  protected override drainOne(): void {
    this.queue = [];
  }
}

/** Acts ten times, then waits for the completions as every check does; reports what it saw. */
const follow: Check = {
  id: "integration.command-completion/follow-probe",
  rules: ["integration.command-completion"],
  description: "acts ten times and follows the completions",
  async run(ctx) {
    const conn = await ctx.session();
    const cursor = await latestSeq(ctx, conn);
    const seqs = new Set<number>();
    for (let i = 0; i < 10; i++) seqs.add(resultOf(await act(ctx, conn, { type: "probe" }, i))?.commandSeq as number);
    const started = Date.now();
    const done = await collectCompletions(ctx, conn, cursor, seqs);
    for (const seq of seqs) {
      const broken = judgeCompletion(done.get(seq), seq, { type: "probe" }, ["integration.command-completion"]);
      if (broken) return broken;
    }
    return pass(JSON.stringify({ evicted: done.mayBeEvicted.size, ms: Date.now() - started, note: done.note }));
  },
};

describe("following completions through a small history", () => {
  const probe = async (make: (token: string) => ReferenceBridge) => {
    const report = await runSuite(make, { checks: [follow], timeoutMs: 300 });
    return report.rules
      .find((r) => r.id.endsWith("integration.command-completion"))!
      .checks.find((c) => c.id === follow.id)!;
  };

  it("passes completions a one-event history dropped unread, says so, and stops once the queue empties", async () => {
    const result = await probe((token) => new BurstBridge({ token, maxEvents: 1, drainIntervalMs: 50 }));
    expect(result.verdict).toBe("pass");
    const seen = JSON.parse(result.message) as { evicted: number; ms: number; note: string };
    expect(seen.evicted).toBeGreaterThan(0);
    expect(seen.note).toMatch(/not judged/);
    expect(seen.ms).toBeLessThan(600); // well before the wait for a completion that cannot come (2 x 300 ms)
  });

  it("still fails commands that never complete when nothing was dropped", async () => {
    const result = await probe((token) => new SilentBridge({ token, maxEvents: 1 }));
    expect(result.verdict).toBe("fail");
    expect(result.message).toMatch(/never completed/);
    // The bridge never completed anything: preflight names it broken before the first check.
    const report = await runSuite((token) => new SilentBridge({ token, maxEvents: 1 }), { checks: [], timeoutMs: 300 });
    expect(report.stopped).toMatchObject({ duty: "completions", after: "preflight" });
    expect(
      report.rules.flatMap((r) => r.checks).find((c) => c.id === "preflight/integration.command-completion"),
    ).toMatchObject({ verdict: "fail" });
  });
});

// A command's completion dropped unread from a one-event history is not waited for once nothing can still be queued:
// the flood's wait after each queue-full error and the drain after it would each wait twice the reply timeout for it.
describe("the ledger's drain through a one-event history", () => {
  it("ends once each command not seen completed may be among the dropped and the queue is empty", async () => {
    const bridge = new SteppedBridge({ token: TEST_TOKEN, maxQueuedCommands: 2, maxEvents: 1 });
    const target = await embeddedTarget(() => bridge, TEST_TOKEN);
    try {
      const ctx = new Harness({
        contract,
        endpoint: target,
        token: TEST_TOKEN,
        timeoutMs: 1000,
        runs: 1,
        timeBudgetMs: 3000,
        seed: 1,
        deadline: Date.now() + 10_000,
      });
      const ledger = await Ledger.open(ctx, await ctx.session());
      const first = (await ledger.send(rpc("act", { type: "first" }, 1))).commandSeq;
      await ledger.send(rpc("act", { type: "second" }, 2));
      bridge.step(); // the first completes, and the second's completion drops it before it is read
      bridge.step();
      // Another client's command completes a while later: a drain still waiting would read it.
      const later = setTimeout(() => bridge.foreign(), 300);
      await ledger.drain();
      clearTimeout(later);
      expect(ledger.pending).toEqual([first]);
      expect(ledger.provablyLost).toBe(0);
      expect(ledger.foreign).toBe(0);
    } finally {
      await target.stop();
    }
  });
});

/** A game loop that moves only when told (step), and a command of another client completed at once (foreign). */
class SteppedBridge extends ReferenceBridge {
  constructor(options: BridgeOptions) {
    super({ ...options, drainIntervalMs: 3_600_000 });
  }
  step(): void {
    this.drainOne();
  }
  foreign(): void {
    this.queue.push({ seq: ++this.commandSeq, command: { type: "elsewhere" } });
    this.drainOne();
  }
}

/** Numbers its events two apart: seqs increase, and the contract asks no more of them. */
class SkipsSeqs extends ReferenceBridge {
  protected override recordEvent(event: JsonObject): void {
    this.eventSeq++;
    super.recordEvent(event);
  }
}

/** Keeps its first event for ever: when full, it drops the second oldest instead of the oldest. */
class PinsFirstEvent extends ReferenceBridge {
  protected override recordEvent(event: JsonObject): void {
    this.history.push({ seq: ++this.eventSeq, event });
    while (this.history.length > this.options.maxEvents) this.history.splice(1, 1);
  }
}

describe("a long history", () => {
  const historyChecks = allChecks.filter((c) => c.state);
  const typed = allChecks.find((c) => c.id === "command.x/typed")!;
  const bound = allChecks.find((c) => c.id === "method.events/history-bound")!;
  const boundIn = (report: Awaited<ReturnType<typeof runSuite>>) =>
    report.rules.find((r) => r.id.endsWith(".integration.bounded-state"))!.checks.find((c) => c.id === bound.id)!;

  it("is filled once, after every check that acts and beside the checks that need neither queue nor history", () => {
    const order = historyFillsOnce(allChecks);
    const at = (c: Check) => order.indexOf(c);
    const [first, ...others] = historyChecks;
    const acting = allChecks.filter((c) => c.needs?.length && !c.state && !c.inherits);
    const quiet = allChecks.filter((c) => !c.needs?.length && !c.state);
    const late = allChecks.filter((c) => c.inherits);
    expect(order).toHaveLength(allChecks.length);
    expect(new Set(order)).toEqual(new Set(allChecks));
    expect(others.length).toBeGreaterThan(0);
    expect(quiet.length).toBeGreaterThan(0);
    expect(late.map((c) => c.id)).toEqual(["validation.protocol-smoke/deep-states"]);
    // In the catalogue's order within each part.
    expect(order).toEqual([...acting, first, ...quiet, ...others, ...late]);
    expect(Math.max(...acting.map(at))).toBeLessThan(at(first!));
  });

  it("where nothing runs beside the fill, follows the quiet checks and the acting ones, history checks together", () => {
    const order = historyFillsOnce(allChecks, false);
    const acting = allChecks.filter((c) => c.needs?.length && !c.state && !c.inherits);
    const quiet = allChecks.filter((c) => !c.needs?.length && !c.state && !c.inherits);
    const late = allChecks.filter((c) => c.inherits && !c.state);
    // The rechecks of a quiet check (fresh bridges) come before the history is made, and nothing between the
    // history checks empties it: each takes over what the one before left.
    expect(order).toEqual([...quiet, ...acting, ...historyChecks, ...late]);
  });

  it("is topped up while the checks that need neither run beside it, and none of them acts", async () => {
    const seen: string[] = [];
    const reporter: Reporter = {
      name: "order",
      onCheckStart: (c) => void seen.push(`start ${c.id}`),
      onCheckEnd: (c) => void seen.push(`end ${c.id}`),
    };
    const acts: string[] = [];
    const quiet = new Set(allChecks.filter((c) => !c.needs?.length && !c.state).map((c) => c.id));
    let current: string[] = [];
    const spy: Reporter = {
      name: "acts",
      onCheckStart: (c) => void (current = [...current, c.id]),
      onCheckEnd: (c) => void (current = current.filter((id) => id !== c.id)),
    };
    class CountsActs extends ReferenceBridge {
      protected override act(params: JsonObject): Json {
        const result = super.act(params) as JsonObject;
        if (result.accepted === true && current.length && current.every((id) => quiet.has(id))) acts.push(current[0]!);
        return result;
      }
    }
    const report = await runSuite((token) => new CountsActs({ token, maxEvents: 60, drainIntervalMs: 5 }), {
      checks: allChecks.filter((c) => c.state || !c.needs?.length),
      reporters: [reporter, spy],
      concurrency: 4,
    });
    const judged = report.rules.flatMap((r) => r.checks).filter((c) => !["pass", "skip"].includes(c.verdict));
    expect(judged).toEqual([]);
    const start = seen.indexOf(`start ${bound.id}`);
    const end = seen.indexOf(`end ${bound.id}`);
    const beside = seen
      .slice(start + 1, end)
      .filter((e) => e.startsWith("start "))
      .map((e) => e.slice(6));
    expect(beside.length).toBeGreaterThan(0);
    for (const id of beside) expect(quiet.has(id)).toBe(true);
    // A command accepted while only checks that need neither queue nor history ran: none.
    expect(acts).toEqual([]);
  });

  it("counts events, not seqs: a bridge whose seqs skip passes on a history earlier checks made", async () => {
    const flood = allChecks.find((c) => c.id === "error.queue-full/flood")!;
    const report = await runSuite((token) => new SkipsSeqs({ token, maxEvents: 30 }), { checks: [flood, bound] });
    const found = boundIn(report);
    expect(found.verdict).toBe("pass");
    expect(Number(/^After (\d+) completions/.exec(found.message)?.[1])).toBeLessThan(35);
  });

  it("fails a bridge that keeps its first event for ever, on the oldest events left", async () => {
    const report = await runSuite((token) => new PinsFirstEvent({ token, maxEvents: 30 }), { checks: [typed, bound] });
    const found = boundIn(report);
    expect(found.verdict).toBe("fail");
    expect(found.message).toMatch(/^With at least 30 newer events, events at or before seq \d+ are still retained/);
  });

  it("is topped up from what the earlier checks' commands made, not made again", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token, maxEvents: 30 }), {
      checks: [typed, bound],
    });
    const found = boundIn(report);
    expect(found.verdict).toBe("pass");
    // From empty it takes maxEvents + 5 = 35 completions.
    const made = Number(/^After (\d+) completions/.exec(found.message)?.[1]);
    expect(made).toBeGreaterThanOrEqual(5);
    expect(made).toBeLessThan(35);
  });

  it("that was taken over and broke the bound is judged again from a fresh bridge, as every replay starts", async () => {
    const unbounded = mutants.find((m) => m.name === "unbounded-history")!;
    // The flood completes a whole queue (64) first: more events than the history may hold.
    const flood = allChecks.find((c) => c.id === "error.queue-full/flood")!;
    const report = await runSuite((token) => unbounded.create({ token, maxEvents: 30 }), {
      checks: [flood, bound],
    });
    const found = boundIn(report);
    expect(found.verdict).toBe("fail");
    // Judged on a fresh bridge: the history holds exactly the maxEvents + 5 this check made, none of the earlier.
    expect(found.message).toMatch(/^status reports 35 retained events, over maxEvents 30/);
  });
});
