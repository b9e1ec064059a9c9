import { expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { runSuite } from "./helpers.js";

// A repeated id is a state of its own, which the deep session's same-id steps judge. Every other check reads under
// ids new on their connection, so a bridge answering a repeated id from a retry cache fails the one rule the deep
// session names and no check mistakes a stale reply for a history that never moves.

const FAST = { maxEvents: 40, maxQueuedCommands: 16, drainIntervalMs: 2 };

it("a retry cache keyed on the previous id fails wire.response-envelope alone, over every check", async () => {
  const mutant = mutants.find((m) => m.name === "id-retry-cache")!;
  const report = await runSuite((token) => mutant.create({ token, ...FAST }), {
    timeoutMs: 400,
    profile: "quick",
  });
  const failed = report.rules.filter((r) => r.verdict === "fail" || r.verdict === "error");
  expect(
    failed.map(
      (r) => `${r.id}: ${r.checks.filter((c) => c.verdict === "fail" || c.verdict === "error").map((c) => c.id)}`,
    ),
  ).toEqual([`ai-control-protocol.wire.response-envelope: validation.protocol-smoke/deep-states`]);
}, 120_000);
