// Facts are typed, never read back from sentences: a skipped or unjudged rule or check carries the
// kind of its reason, and reporters sort by it; rule IDs are named only in protocol/ and suites/.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contract } from "../protocol/contract.js";
import { REASON_KINDS } from "../protocol/verdict.js";
import { consoleReporter } from "../reports/console.js";
import type { Report, RuleReport } from "../reports/types.js";
import { allChecks } from "../suites/index.js";
import { runSuite } from "./helpers.js";

const root = join(import.meta.dirname, "..");

const rule = (id: string, fields: Partial<RuleReport>): RuleReport => ({
  id: `${contract.prefix}.${id}`,
  title: id,
  verdict: "skip",
  group: id.split(".")[0]!,
  level: "MUST",
  observed: "wire",
  requirement: "",
  checks: [],
  ...fields,
});

const report = (rules: RuleReport[]): Report => ({
  schemaVersion: 1,
  tool: { name: "aicontrol-conformance", version: "0.0.0" },
  contract: { version: 1, sha256: "0".repeat(64), rules: rules.length },
  target: { kind: "bridge", endpoint: "127.0.0.1:1", spawned: false },
  seed: 1,
  startedAt: "2026-01-01T00:00:00.000Z",
  durationMs: 1,
  summary: { pass: 0, fail: 0, warn: 0, skip: rules.length, error: 0 },
  rules,
});

function consoleOf(r: Report): string {
  let out = "";
  consoleReporter({ tty: false, env: {}, write: (t) => void (out += t) }).onRunEnd!(r);
  return out;
}

describe("reason kinds", () => {
  it("the report's schema lists every kind", () => {
    const schema = JSON.parse(readFileSync(join(root, "reports/report.schema.json"), "utf8"));
    expect(schema.definitions.reasonKind.enum).toEqual([...REASON_KINDS]);
  });

  it("the console sorts rules by the kind of their reason, whatever its words", () => {
    const out = consoleOf(
      report([
        rule("method.events", { reason: "left out, in other words", reasonKind: "not-chosen" }),
        rule("method.ping", { reason: "not selected, say the words", reasonKind: "not-observable" }),
        rule("method.observe", { reason: "a bridge's duty", reasonKind: "bridge-duty" }),
        rule("method.status", {
          checks: [{ id: "method.status/fields", verdict: "skip", message: "stopped early", reasonKind: "not-run" }],
        }),
      ]),
    );
    expect(out).not.toContain(`${contract.prefix}.method.events`);
    expect(out).toContain(`${contract.prefix}.method.ping`);
    expect(out).toContain("1 rule(s) not selected");
    expect(out).toContain("1 rule(s) binding only bridges");
    expect(out).toContain("1 rule(s) not reached before the run stopped");
    expect(out).toContain("stopped early; 1 check not run");
  });

  it("a run gives the kind of every reason it skips a rule for", async () => {
    const checks = allChecks.filter((c) => !c.rules.includes("method.auth"));
    const unobservable = contract.rules.find((r) => r.observed !== "wire")!;
    const run = await runSuite(undefined, { checks, rules: ["method.ping", unobservable.id] });
    const byId = new Map(run.rules.map((r) => [r.id.slice(contract.prefix.length + 1), r]));
    expect(byId.get("method.ping")!.reasonKind).toBeUndefined();
    expect(byId.get("wire.utf8")).toMatchObject({ verdict: "skip", reasonKind: "not-chosen" });
    expect(byId.get("method.auth")).toMatchObject({ verdict: "error", reasonKind: "uncovered" });
    expect(byId.get(unobservable.id)).toMatchObject({ verdict: "skip", reasonKind: "not-observable" });
    for (const r of run.rules.filter((x) => x.verdict === "skip")) expect(r.reasonKind, r.id).toBeDefined();
  });
});

describe("rule IDs", () => {
  it("are named only in protocol/ and suites/: the runner and the reporters ask", () => {
    const ids = contract.rules.map((r) => r.id);
    const named: string[] = [];
    for (const layer of ["runner", "reports"]) {
      for (const entry of readdirSync(join(root, layer), { recursive: true, withFileTypes: true })) {
        if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
        const file = join(entry.parentPath, entry.name);
        const text = readFileSync(file, "utf8");
        for (const id of ids) if (text.includes(`"${id}"`)) named.push(`${file.slice(root.length + 1)}: ${id}`);
      }
    }
    expect(named).toEqual([]);
  });
});
