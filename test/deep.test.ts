import type { Socket } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import {
  CODES,
  type Json,
  type JsonObject,
  ReferenceBridge,
  RpcError,
  type Session,
} from "../bridges/reference/bridge.js";
import { isWellTyped } from "../generators/command.js";
import { EXTREMES, extremeCommand } from "../generators/extremeCommand.js";
import { COSTLY, STEP_FAMILY, type Step, sessionStep } from "../generators/sessionStep.js";
import { contract } from "../protocol/contract.js";
import { stateCoverageLine } from "../reports/state-coverage.js";
import type { Report } from "../reports/types.js";
import { mergeStateCoverage, RunCoverage } from "../runner/coverage.js";
import { CELLS, Coverage, cursorCell, historyCell, idCell, queueCells } from "../suites/harness/cells.js";
import type { Check } from "../suites/harness/check.js";
import { tour } from "../suites/harness/deep-tour.js";
import { allChecks } from "../suites/index.js";
import { decodeAim, encodeAim, type Plan } from "../suites/validation/protocol-smoke-deep.js";
import { runSuite } from "./helpers.js";

const DEEP = "validation.protocol-smoke/deep-states";
const deep = allChecks.filter((c) => c.id === DEEP);
/** The deep check's entry under a rule it judged (a failure names the one rule it broke; the others say "not judged"). */
const only = (report: Report) =>
  report.rules.flatMap((r) => r.checks).find((c) => c.id === DEEP && c.reasonKind !== "not-judged")!;
/** Small limits and a quick game loop, as the mutant tests use. */
const FAST = { maxEvents: 40, maxQueuedCommands: 16, drainIntervalMs: 2 };

describe("the state cells", () => {
  it("have unique ids, each in its family", () => {
    expect(new Set(CELLS.map((c) => c.id)).size).toBe(CELLS.length);
    for (const c of CELLS) expect(c.id.startsWith(`${c.family}.`)).toBe(true);
  });

  it("read the queue's occupancy, the history's fill and the cursor's place", () => {
    expect(queueCells(0, 8)).toEqual(["queue.empty"]);
    expect(queueCells(7, 8)).toEqual(["queue.max-minus-one"]);
    expect(queueCells(1, 1)).toEqual(["queue.one", "queue.full"]);
    expect(queueCells(0, 1)).toEqual(["queue.empty", "queue.max-minus-one"]);
    expect(historyCell(0, 4, undefined)).toBe("history.empty");
    expect(historyCell(3, 4, false)).toBe("history.below-max");
    expect(historyCell(4, 4, false)).toBe("history.exactly-max");
    expect(historyCell(4, 4, true)).toBe("history.evicting");
    expect(historyCell(4, 4, undefined)).toBeUndefined(); // full before it looked: exactly or evicting, it cannot say
    expect(cursorCell(9, 5, 8)).toBe("cursor.past-newest");
    expect(cursorCell(8, 5, 8)).toBe("cursor.at-newest");
    expect(cursorCell(4, 5, 8)).toBe("cursor.at-oldest");
    expect(cursorCell(2, 5, 8)).toBe("cursor.before-oldest");
    expect(cursorCell(0, 5, 8)).toBeUndefined(); // the start, not a cursor in the evicted range
    expect(cursorCell(6, 5, 8)).toBe("cursor.inside");
    expect([null, [], {}, "x", true, 7, 1.5].map(idCell)).toEqual([
      "id.null",
      "id.array",
      "id.object",
      "id.string",
      "id.boolean",
      "id.integer",
      "id.fraction",
    ]);
  });

  it("keep what a check reached and why the rest is out of reach", () => {
    const cov = new Coverage();
    cov.reach("queue.full");
    cov.cannot("race", "one connection at a time");
    cov.cannot(["queue.full"], "never mind");
    expect(() => cov.reach("queue.nonsense")).toThrow();
    const json = cov.toJSON();
    expect(json.reached).toEqual(["queue.full"]);
    expect(Object.keys(json.unreachable ?? {})).toEqual(CELLS.filter((c) => c.family === "race").map((c) => c.id));
    expect(cov.open().map((c) => c.id)).not.toContain("race.acts");
  });
});

describe("the deep generators", () => {
  const sample = (constraints: Parameters<typeof sessionStep>[0]) =>
    fc.sample(sessionStep(constraints), { numRuns: 2000, seed: 7 }) as Step[];

  it("draw no race with one connection, and use only the first", () => {
    const steps = sample({ types: ["move"] });
    expect(steps.some((s) => STEP_FAMILY[s.kind] === "race")).toBe(false);
    expect(steps.every((s) => !("slot" in s) || s.slot === 0)).toBe(true);
    expect(sample({ twoConnections: true }).some((s) => s.kind === "race-acts")).toBe(true);
  });

  it("draw the aimed families far more often, and the costly steps less", () => {
    const share = (steps: Step[], family: string) =>
      steps.filter((s) => STEP_FAMILY[s.kind] === family).length / steps.length;
    expect(share(sample({ aim: ["auth"] }), "auth")).toBeGreaterThan(3 * share(sample({}), "auth"));
    const plain = sample({});
    const costly = plain.filter((s) => COSTLY.has(s.kind)).length / COSTLY.size;
    const cheap = plain.filter((s) => s.kind === "status").length;
    expect(costly).toBeLessThan(cheap / 2);
    expect(sample({ costly: "aimed" }).some((s) => COSTLY.has(s.kind))).toBe(false);
    expect(sample({ costly: "aimed", aim: ["history"] }).some((s) => s.kind === "fill-history")).toBe(true);
    expect(sample({ costly: "never", aim: ["history"] }).some((s) => COSTLY.has(s.kind))).toBe(false);
  });

  it("give extreme commands legal values in every field of the kinds drawn, and no other field", () => {
    for (const { kinds, command } of fc.sample(extremeCommand({ types: ["t"], longLength: 50 }), 200)) {
      expect(kinds.length).toBeGreaterThan(0);
      for (const { field, kind } of contract.commandFields) {
        if (!kinds.includes(kind)) {
          expect(command[field]).toBeUndefined();
          continue;
        }
        expect(EXTREMES(50)[kind]).toContainEqual(command[field]);
        // Identifiers may be any string, the empty one included (the project decides which it accepts).
        expect(isWellTyped(kind, command[field]) || command[field] === "").toBe(true);
      }
    }
  });

  it("keep a phase's aim with its replay path", () => {
    const plans: Plan[] = [
      { aim: ["queue", "auth"], costly: "aimed" },
      { aim: [], costly: "always" },
      { aim: ["history"], costly: "never", tour: true },
      { aim: [], costly: "aimed", tour: true },
    ];
    for (const plan of plans) expect(decodeAim(encodeAim(plan, "AB:C"))).toEqual({ plan, path: "AB:C" });
    expect(decodeAim(undefined)).toBeUndefined();
  });
});

describe("validation.protocol-smoke/deep-states", () => {
  it("passes the reference bridge and reports the cells it reached", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token, ...FAST }), { checks: deep, runs: 8 });
    const check = only(report)!;
    expect(check.verdict, check.message).toBe("pass");
    const coverage = report.stateCoverage!;
    expect(coverage.total).toBe(CELLS.length);
    expect(coverage.cells.map((c) => c.id)).toEqual(CELLS.map((c) => c.id));
    expect(coverage.reached).toBe(coverage.cells.filter((c) => c.reached).length);
    // Every family is reached somewhere, the races too (this bridge serves two connections at once).
    for (const family of new Set(CELLS.map((c) => c.family)))
      expect(
        coverage.cells.some((c) => c.reached && c.id.startsWith(`${family}.`)),
        family,
      ).toBe(true);
    expect(stateCoverageLine(report)).toMatch(new RegExp(`^state coverage: ${coverage.reached}/${CELLS.length} cells`));
  });

  it("at a game loop of one command per 150 ms, leaves out the steps its time does not allow, says so, and passes", async () => {
    // The bridge's own limits (a history of 512 events: over a minute at this pace), as a user's bridge would have.
    const report = await runSuite((token) => new ReferenceBridge({ token, drainIntervalMs: 150 }), {
      checks: deep,
      profile: "standard",
    });
    const check = only(report);
    expect(check.verdict, check.message).toBe("pass");
    expect(check.message).toMatch(
      /At this bridge's pace \(\d+ ms a command\) these steps were left out: fill-history ×\d/,
    );
    const full = report.stateCoverage!.cells.find((c) => c.id === "history.exactly-max")!;
    expect(full.unreachable).toMatch(/^\d+ commands would take about \d+ s at this bridge's pace/);
    // Every rule it judges passes (those without a token's rules: none left unjudged).
    const touched = report.rules.filter((r) => r.checks.some((c) => c.id === DEEP));
    expect(touched.map((r) => `${r.id}: ${r.verdict}`).filter((r) => !r.endsWith(": pass"))).toEqual([]);
  });

  it("leaves the races out, with the reason, where the bridge serves one connection at a time", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token, singleConnection: true, ...FAST }), {
      checks: deep,
      runs: 4,
    });
    const check = only(report)!;
    expect(check.verdict, check.message).toBe("pass");
    const out = report.stateCoverage!.cells.filter((c) => c.unreachable);
    expect(out.map((c) => c.id).sort()).toEqual(
      ["conn.two-interleaved", ...CELLS.filter((c) => c.family === "race").map((c) => c.id)].sort(),
    );
    expect(out.every((c) => !c.reached && /one connection at a time/.test(c.unreachable!))).toBe(true);
  });

  it("runs its seed sequences on the bridge as it stands but for one start afresh, the generated ones each afresh", async () => {
    let started = 0;
    let before = 0;
    const report = await runSuite(
      (token) => {
        started++;
        return new ReferenceBridge({ token, ...FAST });
      },
      { checks: deep, runs: 4, reporters: [{ name: "starts", onCheckStart: () => void (before = started) }] },
    );
    const check = only(report)!;
    expect(check.verdict, check.message).toBe("pass");
    const ran = Number(/^(\d+) sequences/.exec(check.message)?.[1]);
    const seeds = tour(["echo"], true).length;
    expect(ran).toBeGreaterThan(seeds);
    // One bridge started afresh for the second seed sequence on, and one for each generated sequence.
    expect(started - before).toBe(1 + (ran - seeds));
  });

  it("fails a seed sequence where it fails after the ones before it, and the recheck from a fresh bridge grades it", async () => {
    /** Leaks per connection: past 56 in its life, auth is refused. A fresh bridge's 48 in a row stay below. */
    class TiresOfConnections extends ReferenceBridge {
      private connections = 0;
      protected override accept(socket: Socket): void {
        this.connections++;
        super.accept(socket);
      }
      protected override auth(session: Session, params: JsonObject): Json {
        if (this.connections > 56) throw new RpcError(CODES.invalidRequest, "no more connections");
        return super.auth(session, params);
      }
    }
    const make = (token: string) => new TiresOfConnections({ token, ...FAST });
    const found = only(await runSuite(make, { checks: deep, runs: 4 }));
    expect(found.verdict, found.message).toBe("fail");
    expect(found.message).toMatch(
      /^Connection \d+ of 48 opened and closed in a row: auth was not served.*\(after the seed sequences before it, on the bridge they left\)$/,
    );
    expect(found.counterexample).toMatch(/^\[churn\(/);
    // Alone, from a fresh bridge, the sequence stays below the leak: seen once, a warning.
    const graded = only(await runSuite(make, { checks: deep, runs: 4, recheck: 3 }));
    expect(graded.verdict, graded.message).toBe("warn");
  });

  const locking = mutants.find((m) => m.name === "auth-lockout-after-failures")!;

  it("finds a deep fault in a seed sequence, and the case replays exactly and is FIXED on the reference", async () => {
    const found = only(await runSuite((token) => locking.create({ token, ...FAST }), { checks: deep, timeoutMs: 400 }));
    expect(found.verdict).toBe("fail");
    expect(found.message).toMatch(/right token after 3 wrong/);
    // The whole sequence is in the report: the seed of the auth family, three wrong tokens, a call, the right one.
    expect(found.counterexample).toMatch(
      /^\[reconnect\(.*auth\(\{"slot":0,"right":false,"times":3\}\),status\(.*\),auth\(\{"slot":0,"right":true/,
    );
    expect(found.replayPath).toMatch(/\*~/);
    const exact = new Map([[DEEP, { seed: found.seed!, path: found.path!, replayPath: found.replayPath! }]]);
    const again = only(await runSuite((token) => locking.create({ token, ...FAST }), { checks: deep, cases: exact }));
    expect(again.verdict).toBe("fail");
    expect(again.counterexample).toBe(found.counterexample);
    const fixed = only(
      await runSuite((token) => new ReferenceBridge({ token, ...FAST }), { checks: deep, cases: exact }),
    );
    expect(fixed.verdict).toBe("pass");
  });

  it("shrinks a generated failing sequence to the step that matters, and it replays exactly", async () => {
    // A plan without the seed sequences (no "*" before "~"), costly steps never: only generated sequences run.
    // Decoding per 8 KiB read breaks a line across an 8, 16 or 64 KiB boundary, which most of them send.
    const decoding = mutants.find((m) => m.name === "utf8-decoded-per-read-buffer")!;
    const small = { checks: deep, timeoutMs: 400, timeBudgetMs: 19_000 };
    const generated = new Map([[DEEP, { seed: 42, replayPath: "-~" }]]);
    const found = only(await runSuite((token) => decoding.create({ token, ...FAST }), { ...small, cases: generated }));
    expect(found.verdict).toBe("fail");
    expect(found.counterexample, found.counterexample).toMatch(
      /^long-line\(\{"slot":0,"kibs":\[(8|16|64)\],"char":"[^"]+"\}\) \/\*replayPath=/,
    );
    expect(found.replayPath).not.toMatch(/\*~/);
    const exact = new Map([[DEEP, { seed: found.seed!, path: found.path!, replayPath: found.replayPath! }]]);
    const again = only(await runSuite((token) => decoding.create({ token, ...FAST }), { ...small, cases: exact }));
    expect(again.verdict).toBe("fail");
    expect(again.counterexample).toBe(found.counterexample);
  });
});

describe("state coverage over a run", () => {
  const reporter: Check = {
    id: "a/reports",
    rules: [],
    description: "",
    run: async () => ({ verdict: "pass", message: "" }),
  };
  const other: Check = { ...reporter, id: "b/silent" };
  const reached = (ids: string[]) => ({ verdict: "pass" as const, message: "", cells: { reached: ids } });

  it("aims --duration's rounds at the open cells with the checks that reach cells, then walks at random", () => {
    const cov = new RunCoverage();
    expect(cov.report()).toBeUndefined(); // no check reported cells: no field in the report
    expect(cov.add(reporter, reached(["queue.empty"]))).toEqual(["queue.empty"]);
    cov.add(other, { verdict: "pass", message: "" });
    cov.endFixedPass();
    let round = cov.round([reporter, other]);
    expect(round.checks).toEqual([reporter]);
    expect(round.unreached).toHaveLength(CELLS.length - 1);
    expect(cov.add(reporter, reached(["queue.empty", "queue.full"]))).toEqual(["queue.full"]);
    cov.roundAdded(1);
    for (let i = 0; i < 3; i++) cov.roundAdded(0);
    round = cov.round([reporter, other]);
    expect(round).toEqual({ checks: [reporter, other] }); // aiming added nothing three times: random walks
    const report = cov.report()!;
    expect(report.reached).toBe(2);
    expect(report.addedByDuration).toEqual(["queue.full"]);
    expect(stateCoverageLine({ stateCoverage: report } as Report)).toMatch(
      /^state coverage: 2\/\d+ cells; not reached: .*; --duration added 1$/,
    );
  });

  it("joins the coverage of shards: a cell is reached where any shard reached it", () => {
    const one = new RunCoverage();
    one.add(reporter, {
      verdict: "pass",
      message: "",
      cells: { reached: ["queue.full"], unreachable: { "race.acts": "one" } },
    });
    const two = new RunCoverage();
    two.add(reporter, reached(["queue.empty"]));
    const merged = mergeStateCoverage([one.report(), undefined, two.report()])!;
    expect(merged.reached).toBe(2);
    expect(merged.cells.filter((c) => c.reached).map((c) => c.id)).toEqual(["queue.empty", "queue.full"]);
    expect(merged.cells.find((c) => c.id === "race.acts")?.unreachable).toBe("one");
    expect(mergeStateCoverage([undefined])).toBeUndefined();
  });

  it("--duration reports what it added to the fixed pass", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token, ...FAST }), {
      checks: deep,
      runs: 2,
      durationMs: 2500,
    });
    expect(report.stateCoverage?.addedByDuration).toBeInstanceOf(Array);
    // The finding's own words where it is not a pass: a fault of this tool's under load is then named by the run.
    expect(only(report)?.verdict, JSON.stringify(only(report)).slice(0, 4000)).toBe("pass");
  });
});
