import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { CODES, type Json, type JsonObject, ReferenceBridge, type Session } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import type { Report } from "../reports/types.js";
import { allChecks } from "../suites/index.js";
import { pooled, problems, runSuite, verdictOf } from "./helpers.js";

/** Small limits and a quick game loop, so filling the history takes a moment, not seconds. */
const FAST = { maxEvents: 40, maxQueuedCommands: 16, drainIntervalMs: 2 };

describe("the reference bridge", () => {
  it("passes every check with a token", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token, ...FAST }));
    expect(problems(report)).toEqual([]);
    expect(report.rules).toHaveLength(contract.rules.length);
    expect(report.summary.warn).toBe(0);
  });

  it("passes every check without a token (authorization checks skip)", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token, ...FAST }), { token: "" });
    expect(problems(report)).toEqual([]);
    expect(verdictOf(report, "error.unauthorized")).toBe("skip");
  });

  it("passes every check when it serves one connection at a time", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token, singleConnection: true, ...FAST }));
    expect(problems(report)).toEqual([]);
  });
});

/** Answers a request naming its id or method twice with -32600, echoing the id it read (the last). */
class RefusesDuplicateNames extends ReferenceBridge {
  protected override handleLine(session: Session, line: Buffer): JsonObject | undefined {
    const text = line.toString("utf8");
    if (!["id", "method"].some((k) => text.split(`"${k}":`).length > 2)) return super.handleLine(session, line);
    const { id } = JSON.parse(text) as { id: Json };
    return this.errorResponse(id, CODES.invalidRequest, "Invalid request: a member named twice");
  }
}

/** Echoes a numeric id with the same value but not as written: an integral fraction dropped (1.0 as 1). */
class RespellsIds extends ReferenceBridge {
  protected override idText(line: Buffer, parsed: unknown): string | undefined {
    return super.idText(line, parsed)?.replace(/^(-?\d+)\.0+$/, "$1");
  }
}

describe("readings the contract allows", () => {
  const verdicts = async (make: (token: string) => ReferenceBridge, check: string) => {
    const report = await runSuite(make, { checks: allChecks.filter((c) => c.id === check), timeoutMs: 400 });
    return report.rules.flatMap((r) => r.checks.map((c) => c.verdict));
  };

  it("a refusal of duplicate member names as an invalid request, with the id read, passes error.parse", async () => {
    expect(await verdicts((token) => new RefusesDuplicateNames({ token }), "error.parse/valid-edges")).toEqual([
      "pass",
      "pass",
    ]);
  });

  it("a numeric id echoed as the same value spelt otherwise (1.0 as 1) passes wire.response-envelope", async () => {
    expect(await verdicts((token) => new RespellsIds({ token }), "wire.response-envelope/precise-id")).toEqual([
      "pass",
    ]);
  });
});

// Each mutant at the quick profile (its run count and its time budget for slow checks): quick is held to what
// standard finds, since classes come before random cases in every property whatever the run count. A run mostly
// waits on the bridge's replies and game loop, so AT_ONCE run at a time (as in the blame test), started with the
// first of these tests, and each test judges its own mutant's report.
const AT_ONCE = 4;
let quickRuns: Promise<Report>[] | undefined;
const quickRun = (i: number) =>
  (quickRuns ??= pooled(mutants, AT_ONCE, (mutant) =>
    // Only the check that must catch it: it alone has to fail the rule.
    runSuite((token) => mutant.create({ token, ...FAST }), {
      checks: allChecks.filter((c) => c.id === mutant.check),
      timeoutMs: 400,
      profile: "quick",
    }),
  ))[i]!;

describe.each(mutants.map((m, i) => [m.name, m, i] as const))("mutant %s", (_name, mutant, i) => {
  it(`quick profile: ${mutant.verdict}s ${mutant.check} on ${mutant.breaks} (${mutant.description})`, async () => {
    const report = await quickRun(i);
    expect(verdictOf(report, mutant.breaks)).toBe(mutant.verdict);
    const rule = report.rules.find((r) => r.id.endsWith(`.${mutant.breaks}`))!;
    expect(rule.checks.find((c) => c.id === mutant.check)?.verdict).toBe(mutant.verdict);
  });
});

it("every check is proven able to fail by a mutant", () => {
  const proven = new Set(mutants.map((m) => m.check));
  expect(allChecks.map((c) => c.id).filter((id) => !proven.has(id))).toEqual([]);
  for (const m of mutants) expect(allChecks.find((c) => c.id === m.check)?.rules).toContain(m.breaks);
});

describe("a bridge whose game loop dies on one ill-typed field", () => {
  it("is caught, and the report shows the minimal command that killed it", async () => {
    const mutant = mutants.find((m) => m.name === "drain-dies-on-ill-typed")!;
    const report = await runSuite((token) => mutant.create({ token, ...FAST }), {
      rules: ["command.x"],
      timeoutMs: 400,
      runs: 50,
    });
    const rule = report.rules.find((r) => r.id.endsWith("command.x"))!;
    const failed = rule.checks.find((c) => c.verdict === "fail")!;
    expect(failed.message).toMatch(/never completed/);
    // Shrunk: a type and exactly one ill-typed integer field.
    const minimal = JSON.parse(failed.counterexample!) as Record<string, unknown>;
    expect(Object.keys(minimal)).toHaveLength(2);
    const [field, value] = Object.entries(minimal).find(([k]) => k !== "type")!;
    expect(["x", "y", "screenX", "screenY", "intArg"]).toContain(field);
    expect(Number.isSafeInteger(value)).toBe(false);
    expect(failed.seed).toBeTypeOf("number");
    expect(failed.path).toMatch(/^\d+(:\d+)*$/);
  });
});

describe("a bridge whose game loop dies on one ill-typed field of one advertised type, not the first", () => {
  it("is caught at the quick profile by the class cover, on the exact command", async () => {
    const mutant = mutants.find((m) => m.name === "move-loop-dies-on-string-x")!;
    const report = await runSuite((token) => mutant.create({ token, ...FAST }), {
      checks: allChecks.filter((c) => c.id === "command.x/typed"),
      timeoutMs: 400,
      profile: "quick",
    });
    const rule = report.rules.find((r) => r.id.endsWith(".command.x"))!;
    const failed = rule.checks.find((c) => c.verdict === "fail")!;
    expect(failed.message).toMatch(/never completed/);
    // A class case, tried before any random one: the second advertised type with the empty string.
    expect(JSON.parse(failed.counterexample!)).toEqual({ type: "move", x: "" });
  });
});
