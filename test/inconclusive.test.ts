import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { allChecks } from "../suites/index.js";
import { cli, readReport, runSuite, TEST_TOKEN } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "aicc-inconclusive-"));

describe("a bridge that an earlier check broke", () => {
  it("is blamed once: later checks that need completions are inconclusive, not failed", async () => {
    // Its game loop dies on the first ill-typed integer field: at an endpoint it cannot be restarted.
    const bridge = mutants.find((m) => m.name === "drain-dies-on-ill-typed")!.create({ token: TEST_TOKEN });
    const { port } = await bridge.listen();
    try {
      const json = join(dir, "report.json");
      const r = await cli(
        [
          "--endpoint",
          `127.0.0.1:${port}`,
          "--rules",
          "command.*,error.queue-full,integration.*,validation.*",
          "--profile",
          "quick",
          "--seed",
          "3",
          "--timeout",
          "400ms",
          "--json",
          json,
        ],
        { FONLINE_AI_TOKEN: TEST_TOKEN },
      );
      expect(r.code).toBe(1);
      const report = readReport(json);
      const verdict = (id: string) => report.rules.find((x) => x.id.endsWith(`.${id}`))!.verdict;
      // The identifier fields come first and pass; x kills the loop and fails; the rest cannot be judged.
      expect(verdict("command.target-id")).toBe("pass");
      expect(verdict("command.x")).toBe("fail");
      // Those rules are `error` because no check judged them: their every entry is inconclusive, naming the cause.
      for (const id of ["command.y", "command.screen-x", "command.int-arg", "command.string-arg", "command.append"]) {
        expect(verdict(id), id).toBe("error");
        const entries = report.rules.find((x) => x.id.endsWith(`.${id}`))!.checks;
        expect(entries.map((c) => c.unjudged)).toEqual(
          entries.map(() => ({ cause: "stopped", after: "command.x/typed" })),
        );
      }
      expect(report.stopped).toMatchObject({ duty: "completions", after: "command.x/typed" });
      // Nothing after the root cause is blamed or written off: a check that relies on completions
      // is inconclusive, whatever group it belongs to.
      const checks = report.rules.flatMap((x) => x.checks);
      expect(new Set(checks.filter((c) => c.verdict === "fail").map((c) => c.id))).toEqual(
        new Set(["command.x/typed"]),
      );
      for (const id of ["integration.bounded-state/history-exact", "validation.protocol-smoke/stateful"]) {
        expect(
          checks.find((c) => c.id === id),
          id,
        ).toMatchObject({ verdict: "error" });
      }
      const later = report.rules.find((x) => x.id.endsWith(".command.y"))!.checks[0]!;
      expect(later.message).toMatch(/^inconclusive: the bridge stopped completing commands after command.x\/typed/);
      expect(r.out).toMatch(/stopped completing commands after command.x\/typed/);
    } finally {
      await bridge.close();
    }
  });
});

describe("a bridge whose game loop an earlier check killed, at an endpoint with a token", () => {
  it("keeps the rules other checks judged: inconclusive checks leave notes on ping, auth and unauthorized", async () => {
    const bridge = mutants.find((m) => m.name === "drain-dies-on-ill-typed")!.create({ token: TEST_TOKEN });
    const { port } = await bridge.listen();
    try {
      const json = join(dir, "whole.json");
      // A whole standard run: the deep session and every other check that needs completions is inconclusive.
      const r = await cli(
        [
          "--endpoint",
          `127.0.0.1:${port}`,
          "--profile",
          "standard",
          "--seed",
          "5",
          "--timeout",
          "400ms",
          "--json",
          json,
        ],
        {
          FONLINE_AI_TOKEN: TEST_TOKEN,
        },
      );
      expect(r.code).toBe(1);
      const report = readReport(json);
      const rule = (id: string) => report.rules.find((x) => x.id.endsWith(`.${id}`))!;
      expect(report.stopped).toMatchObject({ duty: "completions", after: "command.x/typed" });
      for (const id of ["method.ping", "method.auth", "error.unauthorized"]) {
        expect(rule(id).verdict, id).toBe("pass");
        // The deep session touches these rules and could not judge them: said in a note, not as a verdict.
        const deep = rule(id).checks.find((c) => c.id === "validation.protocol-smoke/deep-states");
        expect(deep, id).toMatchObject({ verdict: "error", unjudged: { cause: "stopped", after: "command.x/typed" } });
        expect(rule(id).notes, id).toContainEqual(expect.stringMatching(/deep-states .*after command.x\/typed/));
      }
      // The root cause fails its rules; a rule only inconclusive checks covered is `error`, naming it.
      expect(rule("command.x").verdict).toBe("fail");
      expect(rule("command.y").verdict).toBe("error");
      expect(rule("command.y").checks[0]!.message).toMatch(/after command.x\/typed/);
    } finally {
      await bridge.close();
    }
  });
});

describe("a state the check never saw", () => {
  it("is skipped, not passed: a queue count read only after every command completed says nothing of it", async () => {
    // Each command completes before its act is answered, and status says 0 whatever the queue holds: no reading
    // is ever served while a command is queued, so neither a conformant count nor a broken one can be told.
    const zero = mutants.find((m) => m.name === "queued-always-zero")!;
    const report = await runSuite(
      (token) => {
        const bridge = zero.create({ token });
        const act = (bridge as unknown as { act(p: object): unknown }).act.bind(bridge);
        const drain = (bridge as unknown as { drainOne(): void }).drainOne.bind(bridge);
        (bridge as unknown as { act(p: object): unknown }).act = (p) => {
          const accepted = act(p);
          drain();
          return accepted;
        };
        return bridge;
      },
      { checks: allChecks.filter((c) => c.id === "method.status/queued-commands") },
    );
    const check = report.rules.flatMap((r) => r.checks).find((c) => c.id === "method.status/queued-commands")!;
    expect(check.verdict, check.message).toBe("skip");
    expect(check.message).toMatch(/^None of \d+ status readings was served while one of this check's 16 commands/);
  });
});
