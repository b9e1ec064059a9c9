import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import { timeLine } from "../reports/console.js";
import { embeddedTarget } from "../runner/targets.js";
import { type Check, type CheckContext, CommandLedger, pass, resultOf } from "../suites/harness/check.js";
import { LoopAllowance } from "../suites/harness/deep/pace.js";
import { collectCompletions, latestSeq } from "../suites/harness/events.js";
import { Harness } from "../suites/harness/harness.js";
import { act } from "../suites/harness/lifecycle.js";
import { allChecks } from "../suites/index.js";
import { runSuite } from "./helpers.js";

describe("the wait for a completion follows the bridge", () => {
  it("is twice the reply timeout until the pace is known, then ten slowest steps, at least a quarter second", () => {
    const ledger = new CommandLedger();
    expect(ledger.completionWaitMs(2000)).toBe(4000);
    for (const ms of [3, 12, 7]) ledger.step(ms);
    expect(ledger.completionWaitMs(2000)).toBe(250);
    ledger.step(90);
    expect(ledger.completionWaitMs(2000)).toBe(900);
    ledger.step(1000);
    expect(ledger.completionWaitMs(2000)).toBe(4000);
  });

  it("counts a command accepted and its completion read, and what is still outstanding", () => {
    const ledger = new CommandLedger();
    ledger.note("act", { accepted: true, commandSeq: 4 });
    ledger.note("act", { accepted: true, commandSeq: 5 });
    expect(ledger.outstanding).toBe(2);
    ledger.note("events", { latestSeq: 9, events: [{ seq: 9, event: { type: "command_completed", commandSeq: 4 } }] });
    expect(ledger.outstanding).toBe(1);
  });
});

/** Completes nothing before `releaseAt`, then at its usual pace. */
class HeldBridge extends ReferenceBridge {
  releaseAt = 0;
  protected override drainOne(): void {
    if (Date.now() >= this.releaseAt) super.drainOne();
  }
}

/** Acts once, holding the bridge's loop for `releaseInMs`, and waits a quarter second for the completion. */
async function waitThrough(releaseInMs: number, stallMs: number) {
  let bridge: HeldBridge | undefined;
  const probe: Check = {
    id: "integration.command-completion/held-probe",
    rules: ["integration.command-completion"],
    description: "acts once and waits a quarter second for its completion",
    async run(ctx) {
      const conn = await ctx.session();
      const cursor = await latestSeq(ctx, conn);
      bridge!.releaseAt = Date.now() + releaseInMs;
      const seq = resultOf(await act(ctx, conn, { type: "probe" }, 1))?.commandSeq as number;
      // The whole process stops running for a while, as on a loaded machine: the bridge in it too.
      if (stallMs)
        setTimeout(() => {
          const end = Date.now() + stallMs;
          while (Date.now() < end);
        }, 20);
      const started = Date.now();
      const done = await collectCompletions(ctx, conn, cursor, new Set([seq]), { waitMs: 250 });
      return pass(JSON.stringify({ completed: done.has(seq), ms: Date.now() - started }));
    },
  };
  const report = await runSuite((token) => (bridge = new HeldBridge({ token })), { checks: [probe] });
  const found = report.rules.flatMap((r) => r.checks ?? []).find((c) => c.id === probe.id)!;
  expect(found.verdict).toBe("pass");
  return JSON.parse(found.message) as { completed: boolean; ms: number };
}

describe("a stall", () => {
  it("is not time the game loop had: the wait for a completion is lengthened by it", async () => {
    // Held 850 ms, of which 800 the process did not run: a quarter second of running time was not over.
    expect((await waitThrough(850, 800)).completed).toBe(true);
  });

  it("is not assumed: without one, a command held past the wait is not waited for", async () => {
    const seen = await waitThrough(3000, 0);
    expect(seen.completed).toBe(false);
    expect(seen.ms).toBeLessThan(1000);
  });
});

describe("generated cases at a game's pace", () => {
  it("wait on the game loop for their share of the time budget, then stop and say so; classes run whole", async () => {
    const check = allChecks.find((c) => c.id === "method.act/accept-and-complete")!;
    const typed = allChecks.find((c) => c.id === "command.x/typed")!;
    // A 30 ms game loop and a 2 s budget: a 100 ms share is a few cases' waiting.
    const report = await runSuite((token) => new ReferenceBridge({ token, drainIntervalMs: 30 }), {
      checks: [check, typed],
      runs: 100,
      timeBudgetMs: 2000,
    });
    const found = report.rules.flatMap((r) => r.checks ?? []);
    const paced = found.find((c) => c.id === check.id)!;
    expect(paced.verdict).toBe("pass");
    const [, ran, notRun] =
      /^(\d+) generated cases passed \((\d+) more not run: waiting on the game loop/.exec(paced.message) ?? [];
    expect(Number(ran) + Number(notRun)).toBe(100);
    expect(Number(notRun)).toBeGreaterThan(0);
    // The typed checks draw alike but for their field: together they wait for one check's share, each for its part.
    const fields = contract.commandFields.length;
    expect(found.find((c) => c.id === typed.id)!.message).toContain(`took this check's ${2000 / 20 / fields} ms share`);
    // Every class of the typed field is judged, whatever the pace: as many cases as a run of one case holds.
    const classesOnly = await runSuite(undefined, { checks: [typed], runs: 1 });
    const count = (r: typeof report) =>
      Number(
        /^(\d+) generated cases passed/.exec(
          r.rules.flatMap((x) => x.checks ?? []).find((c) => c.id === typed.id)!.message,
        )?.[1],
      );
    // At one run, a typed check of an integer field draws 5 random cases after its classes (suites/command/fields.ts):
    // the classes alone are the rest, and every one of them runs at the game's pace, whatever its share allows.
    const classes = count(classesOnly) - 5;
    expect(classes).toBeGreaterThan(1);
    expect(count(report)).toBeGreaterThanOrEqual(classes);
  });
});

describe("the pace", () => {
  it("is known before the first check, so a run that acts nothing else knows it too", async () => {
    const timeoutMs = 5000;
    const report = await runSuite(undefined, {
      checks: allChecks.filter((c) => c.id === "method.ping/ok"),
      timeoutMs,
    });
    expect(report.time!.completionWaitMs).toBeLessThan(timeoutMs * 2);
    // Whole milliseconds, as every duration of the report: the step is measured net of the machine's loss.
    expect(Number.isInteger(report.time!.slowestStepMs), String(report.time!.slowestStepMs)).toBe(true);
  });
});

/** Opens a connection to `target` and closes it, as a check's harness does, with the run's account. */
async function touch(target: Awaited<ReturnType<typeof embeddedTarget>>, ledger = new CommandLedger()): Promise<void> {
  const harness = new Harness({
    contract,
    endpoint: target,
    ledger,
    timeoutMs: 1000,
    runs: 1,
    timeBudgetMs: 1000,
    seed: 1,
    deadline: Date.now() + 10_000,
  });
  (await harness.connect()).close();
}

describe("the account of commands", () => {
  it("starts over with a bridge started afresh, and keeps the pace", async () => {
    const target = await embeddedTarget((o) => new ReferenceBridge(o));
    try {
      const ledger = new CommandLedger();
      await touch(target, ledger);
      ledger.note("act", { accepted: true, commandSeq: 1 });
      for (const ms of [3, 12, 7]) ledger.step(ms);
      // The same bridge, connected to again: its commands are still outstanding.
      await touch(target, ledger);
      expect(ledger.outstanding).toBe(1);
      await target.restart!();
      await touch(target, ledger);
      expect(ledger.outstanding).toBe(0);
      expect(ledger.completionWaitMs(2000)).toBe(250);
    } finally {
      await target.stop();
    }
  });

  it("is not lost to two restarts asked for at once: they are one bridge started afresh", async () => {
    const target = await embeddedTarget((o) => new ReferenceBridge(o));
    try {
      await touch(target);
      await Promise.all([target.restart!({ force: true }), target.restart!({ force: true })]);
      expect(target.restarts).toBe(1);
      // Fresh, it is kept by a restart not forced, and one forced beside it still happens.
      await Promise.all([target.restart!(), target.restart!({ force: true })]);
      expect(target.restarts).toBe(2);
      // Connected to once it is up: no longer fresh, so the next restart is a real one.
      await touch(target);
      expect(target.fresh).toBe(false);
      await target.restart!();
      expect(target.restarts).toBe(3);
    } finally {
      await target.stop();
    }
  });
});

describe("the time line", () => {
  it("says how long restarts and rechecks took, and the pace the waits assumed", async () => {
    const lenient = mutants.find((m) => m.name === "lenient-json")!;
    // A game loop of 5 ms, and a start of 5 ms: every step and every restart takes a measurable time.
    const slowStart = (token: string) => {
      const bridge = lenient.create({ token, drainIntervalMs: 5 });
      const listen = bridge.listen.bind(bridge);
      bridge.listen = async () => {
        await sleep(5);
        return listen();
      };
      return bridge;
    };
    const report = await runSuite(slowStart, {
      checks: allChecks.filter((c) => c.id === lenient.check || c.id === "method.act/accept-and-complete"),
      recheck: 3,
      timeoutMs: 400,
    });
    expect(report.time!.recheckingMs).toBeGreaterThan(0);
    expect(report.time!.restartsMs).toBeGreaterThan(0);
    expect(report.time!.slowestStepMs).toBeGreaterThan(0);
    // The parts do not overlap: they add up to the run's time, a recheck's restarts counted once, as restarting.
    const parts = report.time!.parts!;
    expect(parts.restartingMs + parts.recheckingMs + parts.shrinkingMs + parts.checksMs).toBe(report.durationMs);
    expect(parts.restartingMs).toBe(report.time!.restartsMs);
    expect(parts.recheckingMs).toBeLessThan(report.time!.recheckingMs);
    const line = timeLine({
      ...report,
      durationMs: 4800,
      time: {
        ...report.time!,
        completionsMs: 800,
        parts: { restartingMs: 1200, recheckingMs: 2500, shrinkingMs: 0, checksMs: 1100 },
      },
    });
    expect(line).toMatch(
      /^time: 4\.8 s: 1\.2 s restarting the bridge, 2\.5 s rechecking, 1\.1 s running the checks \(these add up to the total\); within them [\d.]+ s waiting on the bridge and 0\.8 s waiting for completions \(a completion waited for up to/,
    );
  });
});

describe("the deep session's allowance of game-loop time", () => {
  const at = (timeBudgetMs: number, deadlineIn: number) => {
    const ledger = new CommandLedger();
    for (let i = 0; i < 10; i++) ledger.step(10);
    const ctx = { ledger, timeBudgetMs, deadline: Date.now() + deadlineIn } as unknown as CheckContext;
    return LoopAllowance.of(ctx);
  };

  it("is capped by the profile's budget: at 10 ms a command, quick waits for no history of 512", () => {
    const quick = at(3_000, 30_000);
    expect(quick.affords(512, "fill-history")).toBe(false);
    expect(quick.note()).toMatch(/fill-history ×1/);
    expect(at(20_000, 30_000).affords(512, "fill-history")).toBe(true);
  });

  it("stops a fill part way where the pace the fill sees leaves the rest out of reach, and counts it left out", () => {
    // Read at 5 ms a command (single commands on a loop of one a 10 ms tick): a history of 512 seems to fit 3 s.
    const ledger = new CommandLedger();
    for (let i = 0; i < 10; i++) ledger.step(5);
    const allowance = LoopAllowance.of({ ledger, timeBudgetMs: 3_000, deadline: Date.now() + 30_000 } as never);
    expect(allowance.affords(500, "fill-history")).toBe(true);
    // The first batch of 64 took 10 ms each: the 436 left would take 4.4 s, past the check's 3 s.
    allowance.spent += 64;
    expect(allowance.stillAffords(436, 10, "fill-history")).toBe(false);
    expect(allowance.note()).toMatch(/fill-history ×1/);
    expect(allowance.reason(436, 10)).toMatch(
      /^436 commands would take about 4 s at this bridge's pace \(10 ms a command\)/,
    );
    // At the pace it was read at, or a fast bridge's (a command and its round trips in 5 ms), the rest fits.
    expect(allowance.stillAffords(436, 5, "fill-history")).toBe(true);
  });

  it("is a share of the time to the deadline where that is less", () => {
    expect(at(120_000, 5_000).affords(512, "fill-history")).toBe(false);
  });
});
