import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { CONTRACT_PATH, contract, loadContract } from "../protocol/contract.js";
import { ruleSelector } from "../runner/cli/rules.js";
import { run } from "../runner/run.js";
import { embeddedTarget } from "../runner/targets.js";
import { type Check, pass, resultOf, rpc } from "../suites/harness/check.js";
import { allChecks } from "../suites/index.js";
import { cli, readReport, TEST_TOKEN } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "aicc-revisions-"));
type Upstream = Record<string, { id: string }[]>;

/** A copy of the shipped upstream JSON, edited. */
function revision(name: string, edit: (json: Upstream) => void): string {
  const json = JSON.parse(readFileSync(CONTRACT_PATH, "utf8")) as Upstream;
  edit(json);
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(json, null, 2));
  return file;
}

const withNewRule = revision("new-rule.json", (json) => {
  json.wire_rules!.push({ ...json.wire_rules![0]!, id: "ai-control-protocol.wire.new-rule" });
});

describe("another revision of the contract (--contract)", () => {
  it("reports a rule no check covers as error, and exits 1 unless --allow-uncovered", async () => {
    const json = join(dir, "uncovered.json");
    const r = await cli(["--contract", withNewRule, "--rules", "method.ping", "--profile", "quick", "--json", json]);
    expect(r.code).toBe(1);
    const report = readReport(json);
    const rule = report.rules.find((x) => x.id === "ai-control-protocol.wire.new-rule")!;
    expect(rule.verdict).toBe("error");
    expect(rule.reason).toMatch(/no check for this rule/);
    expect(report.rules).toHaveLength(contract.rules.length + 1);
    expect(report.contract.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(report.contract.sha256).not.toBe(contract.sha256);
    const allowed = await cli([
      "--contract",
      withNewRule,
      "--rules",
      "method.ping",
      "--profile",
      "quick",
      "--allow-uncovered",
    ]);
    expect(allowed.code).toBe(0);
  });

  it("gives the new rule a verdict once one check file covers it", async () => {
    const revised = loadContract(withNewRule);
    const newCheck: Check = {
      id: "wire.new-rule/ping",
      rules: ["wire.new-rule"],
      description: "Sends a ping.",
      async run(ctx) {
        const reply = await ctx.call(await ctx.session(), rpc("ping"));
        return resultOf(reply)?.ok === true ? pass("answered") : { verdict: "fail", message: "no pong" };
      },
    };
    const target = await embeddedTarget((o) => new ReferenceBridge(o), TEST_TOKEN);
    try {
      const report = await run({
        contract: revised,
        checks: [...allChecks, newCheck],
        target,
        targetInfo: { endpoint: target.endpoint, spawned: true, label: target.label },
        token: TEST_TOKEN,
        tokenEnv: "TEST_TOKEN",
        timeoutMs: 1000,
        checkDeadlineMs: 30_000,
        timeBudgetMs: 5_000,
        runs: 5,
        seed: 1,
        profile: "test",
        strict: false,
        selected: ruleSelector(["wire.new-rule"], [], revised),
        reporters: [],
        log: () => {},
      });
      const rule = report.rules.find((x) => x.id === "ai-control-protocol.wire.new-rule")!;
      expect(rule.verdict).toBe("pass");
      expect(rule.checks[0]!.requirement).toBe(revised.rule("wire.new-rule").requirement);
    } finally {
      await target.stop();
    }
  });

  it("reports exactly the rules of an earlier revision (49, no validation.finite-timeout) and passes", async () => {
    const earlier = revision("earlier.json", (json) => {
      json.validation_rules = json.validation_rules!.filter((r) => !r.id.endsWith(".validation.finite-timeout"));
    });
    const json = join(dir, "earlier-report.json");
    const r = await cli(["--contract", earlier, "--profile", "quick", "--seed", "5", "--json", json]);
    expect(r.code).toBe(0);
    const report = readReport(json);
    expect(report.rules).toHaveLength(contract.rules.length - 1);
    expect(report.rules.map((x) => x.id)).not.toContain("ai-control-protocol.validation.finite-timeout");
  });

  it("exits 2 for a malformed contract, naming the file and the JSON path", async () => {
    const broken = revision("broken.json", (json) => {
      (json.wire_rules![2] as unknown as { requirement: number }).requirement = 7;
    });
    const r = await cli(["--contract", broken]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("broken.json");
    expect(r.err).toContain("wire_rules[2].requirement");
  });
});

describe("traceability between the contract and the checks", () => {
  it("every rule observed on the wire has a check; every other rule says why not", () => {
    for (const rule of contract.rules) {
      if (rule.observed === "wire")
        expect(
          allChecks.some((c) => c.rules.includes(rule.id)),
          rule.id,
        ).toBe(true);
      else expect(rule.reason, rule.id).toBeTruthy();
    }
  });

  it("every check names rules of the contract, has a unique id under its first rule, and says what it sends", () => {
    const ids = new Set<string>();
    for (const check of allChecks) {
      expect(ids.has(check.id), check.id).toBe(false);
      ids.add(check.id);
      for (const rule of check.rules) expect(contract.has(rule), `${check.id}: ${rule}`).toBe(true);
      expect(check.id.startsWith(`${check.rules[0]}/`), check.id).toBe(true);
      expect(check.description.length, check.id).toBeGreaterThan(10);
    }
  });

  it("the layers import one way", () => {
    expect(execFileSync(process.execPath, ["scripts/check-layers.js"], { encoding: "utf8" })).toMatch(/one way/);
  });
});
