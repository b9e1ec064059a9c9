import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { LineCounter, parseDocument, isMap, isSeq, isScalar, type Node } from "yaml";
import { RULE_IDS, type ErrorRuleId, type RuleId } from "./rule-ids.js";

export { RULE_IDS, type RuleId, type ErrorRuleId };

export type Observed = "wire" | "client" | "none";
export type Level = "MUST" | "SHOULD";

export interface Rule {
  id: RuleId;
  /** Full stable ID, e.g. "ai-control-protocol.wire.ndjson". */
  fullId: string;
  group: string;
  title: string;
  level: Level;
  requirement: string;
  observed: Observed;
  /** Why the rule is not checked over the wire (observed client or none). */
  reason?: string;
  code?: number;
  valueType?: string;
  params?: string;
  result?: string;
}

export interface Contract {
  prefix: string;
  jsonrpc: string;
  defaults: { host: string; port: number; tokenEnv: string };
  limits: { maxLineBytes: number; eventsLimitMin: number; eventsLimitMax: number };
  methods: string[];
  rules: Rule[];
  rule(id: RuleId): Rule;
  codes: Record<ErrorRuleId, number>;
}

export class ContractError extends Error {}

export const CONTRACT_PATH = fileURLToPath(new URL("./contract.yaml", import.meta.url));

const RULE_KEYS = new Set(["id", "title", "level", "requirement", "observed", "reason", "code", "valueType", "params", "result"]);
const TOP_KEYS = new Set(["prefix", "jsonrpc", "defaults", "limits", "methods", "rules"]);

/** Loads and validates the contract; every error names the file and line. */
export function loadContract(path = CONTRACT_PATH, text = readFileSync(path, "utf8")): Contract {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const where = (node: Node | null | undefined) => {
    const at = node?.range ? lines.linePos(node.range[0]) : undefined;
    return at ? `${path}:${at.line}` : path;
  };
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw new ContractError(`${path}:${e.linePos?.[0].line ?? "?"}: ${e.message.split("\n")[0]}`);
  }
  const root = doc.contents;
  if (!isMap(root)) throw new ContractError(`${path}: the contract must be a YAML mapping`);
  const fail = (node: Node | null | undefined, message: string): never => {
    throw new ContractError(`${where(node)}: ${message}`);
  };
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : "";
    if (!TOP_KEYS.has(key)) fail(pair.key as Node, `unknown key "${key}"`);
  }
  const data = doc.toJS() as Record<string, any>;
  const rulesNode = root.get("rules", true) as Node | undefined;
  if (!isSeq(rulesNode)) return fail(root, `"rules" must be a list`);
  const seq = rulesNode;

  const known = new Set<string>(RULE_IDS);
  const seen = new Map<string, Node>();
  const rules: Rule[] = seq.items.map((item, i) => {
    const node = item as Node;
    if (!isMap(node)) fail(node, `rule ${i + 1} must be a mapping`);
    for (const pair of (node as import("yaml").YAMLMap).items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : "";
      if (!RULE_KEYS.has(key)) fail(pair.key as Node, `unknown key "${key}" in rule ${i + 1}`);
    }
    const raw = data.rules[i] as Record<string, unknown>;
    const id = raw.id;
    if (typeof id !== "string" || !/^[a-z]+\.[a-z0-9-]+$/.test(id)) fail(node, `rule ${i + 1} has a malformed id ${JSON.stringify(id)}`);
    if (seen.has(id as string)) fail(node, `duplicate rule id "${id}" (first at ${where(seen.get(id as string))})`);
    seen.set(id as string, node);
    if (!known.has(id as string)) fail(node, `rule id "${id}" is not in protocol/rule-ids.ts`);
    for (const key of ["title", "requirement"] as const) {
      if (typeof raw[key] !== "string" || raw[key] === "") fail(node, `rule "${id}" needs a non-empty ${key}`);
    }
    if (raw.level !== "MUST" && raw.level !== "SHOULD") fail(node, `rule "${id}": level must be MUST or SHOULD`);
    if (!["wire", "client", "none"].includes(raw.observed as string)) fail(node, `rule "${id}": observed must be wire, client or none`);
    if (raw.observed !== "wire" && typeof raw.reason !== "string") fail(node, `rule "${id}" is observed ${raw.observed} and needs a reason`);
    const isError = (id as string).startsWith("error.");
    if (isError !== Number.isInteger(raw.code)) {
      fail(node, isError ? `error rule "${id}" needs an integer code` : `rule "${id}" is not an error rule and takes no code`);
    }
    const rule = { ...raw, id, fullId: `${data.prefix}.${id}`, group: (id as string).split(".")[0] } as Rule;
    return rule;
  });
  const missing = RULE_IDS.filter((id) => !seen.has(id));
  if (missing.length > 0) fail(rulesNode as Node, `rules missing from the contract: ${missing.join(", ")}`);

  const byId = new Map(rules.map((r) => [r.id, r]));
  const codes = Object.fromEntries(rules.filter((r) => r.code !== undefined).map((r) => [r.id, r.code])) as Contract["codes"];
  const codeOwners = new Map<number, string>();
  for (const r of rules) {
    if (r.code === undefined) continue;
    if (codeOwners.has(r.code)) fail(seen.get(r.id), `code ${r.code} is used by "${codeOwners.get(r.code)}" and "${r.id}"`);
    codeOwners.set(r.code, r.id);
  }
  for (const key of ["prefix", "jsonrpc"]) if (typeof data[key] !== "string") fail(root, `"${key}" must be a string`);
  const d = data.defaults ?? {};
  if (typeof d.host !== "string" || !Number.isInteger(d.port) || typeof d.tokenEnv !== "string") {
    fail(root.get("defaults", true) as Node ?? root, `"defaults" needs host, port and tokenEnv`);
  }
  const l = data.limits ?? {};
  for (const key of ["maxLineBytes", "eventsLimitMin", "eventsLimitMax"]) {
    if (!Number.isInteger(l[key]) || l[key] <= 0) fail((root.get("limits", true) as Node) ?? root, `limits.${key} must be a positive integer`);
  }
  if (!Array.isArray(data.methods) || !data.methods.every((m: unknown) => typeof m === "string")) fail(root, `"methods" must be a list of names`);

  return {
    prefix: data.prefix, jsonrpc: data.jsonrpc, defaults: d, limits: l, methods: data.methods, rules, codes,
    rule: (id) => byId.get(id)!,
  };
}

/** The contract shipped with this tool. */
export const contract: Contract = loadContract();
