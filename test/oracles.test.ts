// The oracle kinds are defined once (protocol/oracles.ts): the reproducer's runtime judges from a
// table of the same kinds, and the report's schema holds each kind's variant as the registry gives it.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ORACLES, oracleSchemas, oracleText } from "../protocol/oracles.js";
import { RUNTIME_MODULES, runtimeScript } from "../runner/export/script.js";

const hasPython = spawnSync("python3", ["--version"]).status === 0;

/** The runtime's table, as every exported script holds it: each kind and the name of the function that judges it. */
function runtimeTable(): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), "aicc-oracles-"));
  writeFileSync(join(dir, "runtime.py"), runtimeScript());
  const run = spawnSync(
    "python3",
    ["-c", "import json, runtime; print(json.dumps({k: f.__name__ for k, f in runtime.ORACLES.items()}))"],
    {
      env: { PATH: process.env.PATH, PYTHONPATH: dir, PYTHONDONTWRITEBYTECODE: "1" },
      encoding: "utf8",
      timeout: 20_000,
    },
  );
  rmSync(dir, { recursive: true, force: true });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, string>;
}

describe("oracle kinds", () => {
  it.skipIf(!hasPython)("the reproducer's runtime judges exactly the registry's kinds, each by its own judge", () => {
    const table = runtimeTable();
    expect(Object.keys(table).sort()).toEqual(Object.keys(ORACLES).sort());
    for (const [kind, judge] of Object.entries(table)) expect(judge).toBe(`judge_${kind}`);
  });

  it.skipIf(!hasPython)("the runtime's modules, joined into one script, define each name once", () => {
    const names = `
import ast, json, sys
seen = {}
for path in sys.argv[1:]:
    for node in ast.parse(open(path).read()).body:
        targets = [node] if hasattr(node, "name") else getattr(node, "targets", [])
        for t in targets:
            for n in ([t.name] if hasattr(t, "name") else [e.id for e in getattr(t, "elts", [t]) if hasattr(e, "id")]):
                seen.setdefault(n, []).append(path.rsplit("/", 1)[-1])
print(json.dumps({n: where for n, where in seen.items() if len(where) > 1}))
`;
    const files = RUNTIME_MODULES.map((f) => join(import.meta.dirname, "../runner", f));
    const run = spawnSync("python3", ["-c", names, ...files], { encoding: "utf8", timeout: 20_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({});
    expect(runtimeScript()).not.toMatch(/^from reproducer_/m);
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
