import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONTRACT_PATH, ContractError, contract, loadContract, RULE_IDS } from "../protocol/contract.js";
import { allChecks } from "../suites/index.js";

const yaml = readFileSync(CONTRACT_PATH, "utf8");
const load = (text: string) => () => loadContract("contract.yaml", text);

describe("protocol/contract.yaml", () => {
  it("holds all 50 rule IDs in their groups", () => {
    const count = (g: string) => contract.rules.filter((r) => r.group === g).length;
    expect(contract.rules).toHaveLength(50);
    expect([count("wire"), count("method"), count("error"), count("command"), count("security"), count("integration"), count("validation")]).toEqual([7, 6, 6, 11, 7, 6, 7]);
    expect(contract.rules.map((r) => r.id)).toEqual([...RULE_IDS]);
  });

  it("carries the error codes, limits and defaults of the wire table", () => {
    expect(contract.codes).toEqual({
      "error.parse": -32700, "error.invalid-request": -32600, "error.method-not-found": -32601,
      "error.invalid-params": -32602, "error.unauthorized": -32001, "error.queue-full": -32002,
    });
    expect(contract.limits).toEqual({ maxLineBytes: 1_048_576, eventsLimitMin: 1, eventsLimitMax: 500 });
    expect(contract.defaults).toEqual({ host: "127.0.0.1", port: 43011, tokenEnv: "FONLINE_AI_TOKEN" });
    expect(contract.rule("wire.ndjson").fullId).toBe("ai-control-protocol.wire.ndjson");
  });

  it("every rule has a check, or a written reason for having none", () => {
    const uncovered = contract.rules.filter((r) => !allChecks.some((c) => c.rules.includes(r.id)) && !(r.observed !== "wire" && r.reason));
    expect(uncovered.map((r) => r.id)).toEqual([]);
  });

  it("every check names the rules it covers, a description and a requirement, under a unique id", () => {
    const ids = allChecks.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const check of allChecks) {
      expect(check.rules.length).toBeGreaterThan(0);
      expect(check.description.length).toBeGreaterThan(10);
      expect(check.requirement.length).toBeGreaterThan(10);
      expect(check.rules).toContain(check.id.split("/")[0]);
    }
  });
});

describe("the contract loader", () => {
  it("names the line of an unknown key", () => {
    const text = yaml.replace("    title: \"One JSON object per line\"", "    title: \"One JSON object per line\"\n    colour: blue");
    const line = text.split("\n").findIndex((l) => l.includes("colour")) + 1;
    expect(load(text)).toThrow(new ContractError(`contract.yaml:${line}: unknown key "colour" in rule 2`));
  });

  it("names both places of a duplicate ID", () => {
    const text = yaml.replace("  - id: wire.utf8", "  - id: wire.ndjson");
    expect(load(text)).toThrow(/duplicate rule id "wire.ndjson" \(first at contract.yaml:\d+\)/);
  });

  it("rejects a malformed code and a missing one", () => {
    expect(load(yaml.replace("code: -32700", "code: parse"))).toThrow(/contract.yaml:\d+: error rule "error.parse" needs an integer code/);
    expect(load(yaml.replace("code: -32601", "code: -32700"))).toThrow(/code -32700 is used by "error.parse" and "error.method-not-found"/);
  });

  it("rejects an unknown top-level key, a malformed ID and broken YAML", () => {
    expect(load(`${yaml}\nextra: 1\n`)).toThrow(/unknown key "extra"/);
    expect(load(yaml.replace("  - id: wire.utf8", "  - id: Wire UTF8"))).toThrow(/malformed id "Wire UTF8"/);
    expect(load("rules: [\n")).toThrow(/^contract.yaml:\d+: /);
  });

  it("requires a reason where a rule is not checked over the wire", () => {
    const text = yaml.replace(/(  - id: security\.shipping-build[\s\S]*?)\n    reason: .*/, "$1");
    expect(load(text)).toThrow(/rule "security.shipping-build" is observed none and needs a reason/);
  });

  it("rejects a rule missing from the contract", () => {
    const text = yaml.replace(/  - id: validation\.shipping-artifact[\s\S]*$/, "");
    expect(load(text)).toThrow(/rules missing from the contract: validation.shipping-artifact/);
  });
});
