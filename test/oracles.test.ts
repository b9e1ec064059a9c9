// The oracle kinds are defined once (protocol/oracles.ts): the reproducer's runtime judges from a
// table of the same kinds, and the report's schema holds each kind's variant as the registry gives it.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ORACLES, oracleSchemas, oracleText } from "../protocol/oracles.js";

const hasPython = spawnSync("python3", ["--version"]).status === 0;

/** The runtime's table: each kind and the name of the function that judges it. */
function runtimeTable(): Record<string, string> {
  const run = spawnSync(
    "python3",
    ["-c", "import json, reproducer; print(json.dumps({k: f.__name__ for k, f in reproducer.ORACLES.items()}))"],
    {
      // No bytecode written beside the runtime: the test leaves the tree as it found it.
      env: { PATH: process.env.PATH, PYTHONPATH: join(import.meta.dirname, "../runner"), PYTHONDONTWRITEBYTECODE: "1" },
      encoding: "utf8",
      timeout: 20_000,
    },
  );
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, string>;
}

describe("oracle kinds", () => {
  it.skipIf(!hasPython)("the reproducer's runtime judges exactly the registry's kinds, each by its own judge", () => {
    const table = runtimeTable();
    expect(Object.keys(table).sort()).toEqual(Object.keys(ORACLES).sort());
    for (const [kind, judge] of Object.entries(table)) expect(judge).toBe(`judge_${kind}`);
  });

  it("the report's schema holds every kind's variant as the registry defines it", () => {
    const schema = JSON.parse(readFileSync(join(import.meta.dirname, "../reports/report.schema.json"), "utf8"));
    expect(schema.definitions.check.properties.oracle.oneOf).toEqual(oracleSchemas());
  });

  it("each kind's variant names its kind, and its text reads without the oracle's internals", () => {
    for (const [kind, k] of Object.entries(ORACLES))
      expect((k.schema as { properties: { kind: unknown } }).properties.kind).toEqual({ const: kind });
    expect(oracleText({ kind: "error", codes: [-32700], orClose: true })).toBe(
      "an error with code -32700, or the connection closed",
    );
    expect(oracleText({ kind: "ledger", judge: "status", start: 1, limitFrom: 2, codes: [] })).toBe(
      "status.queuedCommands within the accepted commands not yet completed, and not above maxQueuedCommands",
    );
  });
});
