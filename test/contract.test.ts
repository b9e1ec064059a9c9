import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CONTRACT_PATH, ContractError, contract, loadContract } from "../protocol/contract.js";

const OVERLAY_PATH = join(dirname(CONTRACT_PATH), "overlay.yaml");
const jsonText = readFileSync(CONTRACT_PATH, "utf8");
const overlayText = readFileSync(OVERLAY_PATH, "utf8");
const overlay = parse(overlayText);

interface UpstreamRule {
  id: string;
  name: string;
  code?: number;
  value_type?: string;
}
const LISTS = [
  "wire_rules",
  "methods",
  "error_codes",
  "command_fields",
  "security_rules",
  "integration_rules",
  "validation_rules",
] as const;
/** A fresh parsed copy of the shipped JSON, to count from or to break. */
const upstream = () => JSON.parse(jsonText) as Record<string, any>;
const shipped = upstream();
const upstreamRules = LISTS.flatMap((list) => shipped[list] as UpstreamRule[]);
const short = (fullId: string) => fullId.slice(`${shipped.scope.surface}.`.length);

const dir = mkdtempSync(join(tmpdir(), "aicontrol-contract-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `content` (an object is written as JSON) under the temp folder and returns its path. */
function temp(name: string, content: string | object): string {
  const file = join(dir, name);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return file;
}

/** `text` as a literal inside a RegExp. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The ContractError message loading these files throws. */
function loadError(path: string, overlayPath?: string): string {
  try {
    loadContract(path, overlayPath);
  } catch (error) {
    expect(error).toBeInstanceOf(ContractError);
    return (error as Error).message;
  }
  throw new Error(`${path} loaded without an error`);
}

describe("the shipped contract", () => {
  it("holds every rule of the JSON's lists, in the JSON's order", () => {
    expect(contract.rules).toHaveLength(upstreamRules.length);
    expect(contract.rules.map((r) => r.fullId)).toEqual(upstreamRules.map((r) => r.id));
    expect(contract.rules.map((r) => r.title)).toEqual(upstreamRules.map((r) => r.name));
    expect(contract.rule("wire.ndjson")).toMatchObject({ fullId: "ai-control-protocol.wire.ndjson", group: "wire" });
  });

  it("takes its codes, limits, defaults and identity from the JSON's outputs and the overlay", () => {
    const outputs = shipped.outputs;
    // outputs.error_codes names a code in snake_case ("invalid_request"), its rule in kebab-case.
    const codes = Object.fromEntries(
      Object.entries(outputs.error_codes).map(([name, code]) => [`error.${name.replaceAll("_", "-")}`, code]),
    );
    expect(contract.codes).toEqual(codes);
    expect(contract.limits).toEqual({ maxLineBytes: outputs.max_line_bytes, ...overlay.limits });
    expect(contract.defaults).toEqual({ host: outputs.default_host, port: outputs.default_port, ...overlay.defaults });
    expect(contract).toMatchObject({
      file: CONTRACT_PATH,
      version: outputs.protocol_version,
      schemaVersion: shipped.schema_version,
      prefix: shipped.scope.surface,
      jsonrpc: outputs.jsonrpc_version,
      methods: outputs.methods,
    });
    expect(contract.sha256).toBe(createHash("sha256").update(readFileSync(CONTRACT_PATH)).digest("hex"));
    for (const rule of shipped.error_codes as UpstreamRule[]) {
      expect(contract.rule(short(rule.id)).code).toBe(rule.code);
    }
  });

  it("gives every rule a level and how it is observed, with a reason where that is not the wire", () => {
    for (const rule of contract.rules) {
      expect(["MUST", "SHOULD"]).toContain(rule.level);
      expect(["wire", "client", "none"]).toContain(rule.observed);
      if (rule.observed !== "wire") expect(rule.reason, rule.id).toMatch(/\w/);
    }
    // Every rule of the shipped JSON has its own overlay entry: none falls back to the default.
    expect(Object.keys(overlay.rules).sort()).toEqual(contract.rules.map((r) => r.id).sort());
    expect(contract.rule("security.shipping-build")).toMatchObject({ level: "SHOULD", observed: "none" });
  });

  it("lists the 10 optional command fields with their JSON types", () => {
    expect(contract.commandFields.map(({ field, kind }) => `${field}:${kind}`)).toEqual([
      "targetId:identifier",
      "itemId:identifier",
      "auxId:identifier",
      "x:integer",
      "y:integer",
      "screenX:integer",
      "screenY:integer",
      "intArg:integer",
      "stringArg:string",
      "append:boolean",
    ]);
    for (const f of contract.commandFields) expect(contract.rule(f.rule).title).toBe(f.field);
  });

  it("answers has() and throws ContractError for an unknown rule", () => {
    expect(contract.has("method.events")).toBe(true);
    expect(contract.has("method.nope")).toBe(false);
    expect(() => contract.rule("method.nope")).toThrow(ContractError);
  });
});

describe("the compiled contract the build writes", () => {
  it("is the shipped contract, joined and validated", async () => {
    // The global setup builds dist/, whose contract loads from its compiled form.
    const built = "../dist/protocol/contract.js";
    const dist = (await import(built)) as { contract: typeof contract };
    const facts = ({ rule: _r, has: _h, file: _f, ...rest }: typeof contract) => rest;
    expect(JSON.parse(readFileSync("dist/protocol/contract.compiled.json", "utf8")).contract.rules).toHaveLength(
      contract.rules.length,
    );
    expect(facts(dist.contract)).toEqual(facts(contract));
    expect(dist.contract.rule("wire.utf8")).toEqual(contract.rule("wire.utf8"));
  });
});

describe("another revision of the JSON", () => {
  it("without a rule loads one rule fewer; the overlay entry for it is ignored", () => {
    const json = upstream();
    json.validation_rules = json.validation_rules.filter((r: UpstreamRule) => !r.id.endsWith(".finite-timeout"));
    const older = loadContract(temp("older.json", json));
    expect(older.rules).toHaveLength(contract.rules.length - 1);
    expect(older.has("validation.finite-timeout")).toBe(false);
    expect(() => older.rule("validation.finite-timeout")).toThrow(ContractError);
  });

  it("with a rule the overlay does not know loads it as MUST, observed on the wire", () => {
    const json = upstream();
    json.wire_rules.push({ id: "ai-control-protocol.wire.new-rule", name: "New rule", requirement: "Something new." });
    const newer = loadContract(temp("newer.json", json));
    expect(newer.rules).toHaveLength(contract.rules.length + 1);
    expect(newer.rule("wire.new-rule")).toEqual({
      id: "wire.new-rule",
      fullId: "ai-control-protocol.wire.new-rule",
      group: "wire",
      title: "New rule",
      requirement: "Something new.",
      level: "MUST",
      observed: "wire",
    });
    // It is listed with its own list, in the JSON's order.
    expect(newer.rules.findIndex((r) => r.id === "wire.new-rule")).toBe(shipped.wire_rules.length);
  });
});

describe("a malformed contract JSON is a ContractError naming the file and the JSON path", () => {
  const broken = (name: string, edit: (json: Record<string, any>) => void) => {
    const json = upstream();
    edit(json);
    return temp(name, json);
  };

  it("not JSON, or not readable", () => {
    const file = temp("other.json", `${jsonText.slice(0, 200)},,`);
    expect(loadError(file)).toMatch(new RegExp(`^${literal(file)}: not JSON: .+`));
    expect(loadError(join(dir, "missing.json"))).toBe(`${join(dir, "missing.json")}: cannot read it (ENOENT)`);
  });

  it("a rule whose requirement is a number, or that lacks one", () => {
    const file = broken("number.json", (json) => {
      json.wire_rules[3].requirement = 42;
    });
    expect(loadError(file)).toBe(`${file}: wire_rules[3].requirement: expected a string`);
    const missing = broken("missing-requirement.json", (json) => {
      delete json.methods[1].requirement;
    });
    expect(loadError(missing)).toBe(`${missing}: methods[1].requirement: missing`);
  });

  it("a duplicate rule id", () => {
    const file = broken("duplicate.json", (json) => {
      json.security_rules[2].id = json.wire_rules[1].id;
    });
    expect(loadError(file)).toBe(
      `${file}: security_rules[2].id: duplicate rule id "${shipped.wire_rules[1].id}" (first at wire_rules[1].id)`,
    );
  });

  it("an error code that is not an integer, or that two rules share", () => {
    const file = broken("code.json", (json) => {
      json.error_codes[0].code += 0.5;
    });
    expect(loadError(file)).toBe(`${file}: error_codes[0].code: expected an integer`);
    const missing = broken("no-code.json", (json) => {
      delete json.error_codes[2].code;
    });
    expect(loadError(missing)).toBe(`${missing}: error_codes[2].code: missing`);
    const shared = broken("shared.json", (json) => {
      json.error_codes[2].code = json.error_codes[0].code;
    });
    const code = shipped.error_codes[0].code;
    expect(loadError(shared)).toBe(`${shared}: error_codes[2].code: code ${code} is also the code of error_codes[0]`);
  });

  it("an id without the contract's prefix", () => {
    const file = broken("prefix.json", (json) => {
      json.command_fields[4].id = "other-protocol.command.x";
    });
    expect(loadError(file)).toBe(
      `${file}: command_fields[4].id: "other-protocol.command.x" is not "ai-control-protocol.<group>.<name>"`,
    );
  });
});

describe("a malformed overlay is a ContractError naming the file and the line", () => {
  /** Writes an overlay.yaml with `edit` applied and returns the load error and the 1-based line of `marker`. */
  const broken = (edit: (text: string) => string, marker: string) => {
    const text = edit(overlayText);
    expect(text).not.toBe(overlayText);
    const file = temp("overlay.yaml", text);
    const line = text.split("\n").findIndex((l) => l.includes(marker)) + 1;
    return { message: loadError(CONTRACT_PATH, file), file, line };
  };

  it("an unknown key", () => {
    const edit = (t: string) => t.replace("method.ping: {", "method.ping: { colour: blue,");
    const { message, file, line } = broken(edit, "colour");
    expect(message).toBe(`${file}:${line}: rules.method.ping: unknown key "colour"`);
  });

  it("a level or observed outside its set", () => {
    const level = broken((t) => t.replace("wire.utf8: { level: MUST", "wire.utf8: { level: MAY"), "wire.utf8");
    expect(level.message).toBe(`${level.file}:${level.line}: rules.wire.utf8.level: expected one of: MUST, SHOULD`);
    const tcp = (t: string) => t.replace(/(error\.parse: \{ level: MUST, observed:) wire/, "$1 tcp");
    const observed = broken(tcp, "error.parse");
    expect(observed.message).toBe(
      `${observed.file}:${observed.line}: rules.error.parse.observed: expected one of: wire, client, none`,
    );
  });

  it("a rule not observed on the wire without a reason", () => {
    const { message, file, line } = broken(
      (t) => t.replace(/( {2}security\.shipping-build:\n.*\n {4}observed: none\n) {4}reason: >-\n.*\n/, "$1"),
      "security.shipping-build",
    );
    const where = "rules.security.shipping-build.reason";
    expect(message).toBe(`${file}:${line}: ${where}: a rule not observed on the wire needs a reason`);
  });

  it("broken YAML and a missing default", () => {
    const yaml = broken((t) => `${t}\n  wire.ndjson: [\n`, "wire.ndjson: [");
    expect(yaml.message).toMatch(new RegExp(`^${literal(yaml.file)}:\\d+: `));
    const token = broken((t) => t.replace(/defaults:\n {2}tokenEnv: .*\n/, "defaults: {}\n"), "defaults:");
    expect(token.message).toBe(`${token.file}:${token.line}: defaults.tokenEnv: missing`);
  });
});
