import { describe, expect, it } from "vitest";
import { contract } from "../protocol/contract.js";
import { aggregate } from "../runner/aggregate.js";
import type { Check, Finding } from "../suites/harness/check.js";

describe("a check that judged another rule", () => {
  const check: Check = {
    id: "wire.ndjson/x",
    rules: ["wire.ndjson", "wire.tcp-stream"],
    description: "d",
    run: async () => ({ verdict: "pass", message: "" }),
  };
  const labelled = (finding: Finding) =>
    aggregate(
      contract,
      [{ check, finding, report: { id: check.id, verdict: finding.verdict, message: finding.message } }],
      () => true,
      () => undefined,
    ).find((r) => r.id.endsWith("wire.tcp-stream"))!.checks[0]!.message;

  it("says it stopped at a failure only after one, and that a warning was a warning", () => {
    expect(labelled({ verdict: "fail", message: "m", rules: ["wire.ndjson"] })).toMatch(
      /stopped at a failure on .*wire.ndjson/,
    );
    expect(labelled({ verdict: "warn", message: "m", rules: ["wire.ndjson"] })).toMatch(
      /ended with a warning on .*wire.ndjson/,
    );
    expect(labelled({ verdict: "warn", message: "m", rules: ["wire.ndjson"] })).not.toMatch(/failure/);
  });
});
