// The AiControl contract as this tool uses it: the upstream AiControlProtocol.json (rule IDs, rule text,
// codes, limits, default endpoint) joined with our overlay.yaml (level, how each rule is observed, and the
// few defaults upstream lacks). Every fact comes from those two files; nothing here restates one.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { Document, LineCounter, Node } from "yaml";
import type { z as Z } from "zod";
import { yaml } from "./yaml.js";

// The validators load on first use: the shipped contract is read from the form the build
// compiled it to (see COMPILED_PATH), so most runs start without them.
const load = createRequire(import.meta.url);

/** Short rule ID, e.g. "wire.ndjson". Rules vary by contract revision, so any string may be one. */
export type RuleId = string;
export type Observed = "wire" | "client" | "none";
export type Level = "MUST" | "SHOULD";
export type FieldKind = "identifier" | "integer" | "string" | "boolean";

export interface Rule {
  id: RuleId;
  /** Stable upstream ID, e.g. "ai-control-protocol.wire.ndjson". */
  fullId: string;
  /** First part of the short ID: wire, method, error, command, ... */
  group: string;
  title: string;
  level: Level;
  requirement: string;
  observed: Observed;
  /** Why the rule has no wire check (observed client or none). */
  reason?: string;
  note?: string;
  /** Error rules: the JSON-RPC error code. */
  code?: number;
  /** Command field rules: the upstream value_type, e.g. "project identifier". */
  valueType?: string;
  /** Method rules: params and result shapes as upstream writes them. */
  params?: string;
  result?: string;
}

export interface Contract {
  /** Path of the JSON it was read from. */
  file: string;
  /** Hex SHA-256 of the JSON file's bytes: reports name the exact revision they judged against. */
  sha256: string;
  version: number;
  schemaVersion: number;
  prefix: string;
  jsonrpc: string;
  defaults: { host: string; port: number; tokenEnv: string };
  limits: { maxLineBytes: number; eventsLimitMin: number; eventsLimitMax: number };
  methods: string[];
  /** Error code per short error rule ID: codes["error.parse"]. */
  codes: Record<string, number>;
  /** The optional command fields of `act`: every command field but the discriminator. */
  commandFields: readonly { field: string; rule: RuleId; kind: FieldKind }[];
  /** Every rule, in the JSON's order. */
  rules: Rule[];
  /** The rule with this short ID; throws ContractError for an unknown one. */
  rule(id: RuleId): Rule;
  has(id: RuleId): boolean;
}

export class ContractError extends Error {
  override name = "ContractError";
}

export const CONTRACT_PATH = fileURLToPath(new URL("./AiControlProtocol.json", import.meta.url));
const OVERLAY_PATH = fileURLToPath(new URL("./overlay.yaml", import.meta.url));

/** The upstream file layout this loader understands; another layout needs another loader. */
const SCHEMA_VERSION = 1;

/** `act` routes a command by this field (method.act params); every other command field is optional. */
const DISCRIMINATOR = "type";

/** How upstream's value_type names map to the JSON types a command field takes. */
const FIELD_KINDS: Record<string, FieldKind> = {
  "project identifier": "identifier",
  integer: "integer",
  string: "string",
  boolean: "boolean",
};

// ---- the upstream JSON ----

/** Type names for zod's messages; every number in either file is an integer. */
const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "an integer",
  int: "an integer",
  boolean: "a boolean",
  array: "a list",
  object: "an object",
  record: "an object",
};

/** Short zod messages for a wrong type or value, telling a missing member from an ill-typed one. */
const describeIssue = (issue: Z.core.$ZodRawIssue) => {
  if (issue.code !== "invalid_type" && issue.code !== "invalid_value") return undefined;
  if (issue.input === undefined) return "missing";
  if (issue.code === "invalid_value") return `expected one of: ${issue.values.join(", ")}`;
  return `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
};

/** The schemas of both files, built on first use. */
function buildSchemas() {
  const { z } = load("zod") as typeof import("zod");
  const text = z.string().min(1, { error: "expected a non-empty string" });
  const integer = z.int();
  const positive = integer.positive({ error: "expected a positive integer" });

  const rules = <T extends Z.ZodRawShape>(extra: T) =>
    z.array(z.object({ id: text, name: text, requirement: text, ...extra }));

  // Unknown members (description, rationale, source, ...) are upstream's business: zod drops them.
  const Upstream = z.object({
    schema_version: z.literal(SCHEMA_VERSION, {
      error: (issue) => (issue.input === undefined ? "missing" : `this tool reads schema_version ${SCHEMA_VERSION}`),
    }),
    scope: z.object({ surface: text }),
    outputs: z.object({
      protocol_version: integer,
      jsonrpc_version: text,
      default_host: text,
      default_port: positive,
      max_line_bytes: positive,
      methods: z.array(text),
      error_codes: z.record(z.string(), integer),
    }),
    wire_rules: rules({}),
    methods: rules({ params: text, result: text }),
    error_codes: rules({ code: integer }),
    command_fields: rules({
      value_type: z.enum(Object.keys(FIELD_KINDS)),
    }),
    security_rules: rules({}),
    integration_rules: rules({}),
    validation_rules: rules({}),
  });

  const OverlayRule = z
    .strictObject({
      level: z.enum(["MUST", "SHOULD"]),
      observed: z.enum(["wire", "client", "none"]),
      reason: text.optional(),
      note: text.optional(),
    })
    .refine((r) => r.observed === "wire" || r.reason !== undefined, {
      path: ["reason"],
      error: "a rule not observed on the wire needs a reason",
    });

  const Overlay = z.strictObject({
    defaults: z.strictObject({ tokenEnv: text }),
    limits: z
      .strictObject({ eventsLimitMin: positive, eventsLimitMax: positive })
      .refine((l) => l.eventsLimitMin <= l.eventsLimitMax, { error: "eventsLimitMin exceeds eventsLimitMax" }),
    rules: z.record(z.string(), OverlayRule),
  });
  return { Upstream, OverlayRule, Overlay };
}
let built: ReturnType<typeof buildSchemas> | undefined;
const schemas = () => {
  built ??= buildSchemas();
  return built;
};
type Schemas = ReturnType<typeof buildSchemas>;
type Upstream = Z.infer<Schemas["Upstream"]>;
type OverlayRule = Z.infer<Schemas["OverlayRule"]>;
type Overlay = Z.infer<Schemas["Overlay"]>;

/** The members of the JSON that are rule lists. */
const RULE_LISTS = [
  "wire_rules",
  "methods",
  "error_codes",
  "command_fields",
  "security_rules",
  "integration_rules",
  "validation_rules",
] as const;
type RuleList = (typeof RULE_LISTS)[number];
/** An entry of any rule list, seen through one type. */
type Entry = Upstream[RuleList][number] & Partial<{ code: number; value_type: string; params: string; result: string }>;

/** An upstream rule with the JSON path it was found at, for error messages. */
interface Located {
  entry: Entry;
  at: string;
}

/** `wire_rules[3].requirement` from zod's path segments. */
function jsonPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`))
    .join("");
}

function readBytes(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new ContractError(`${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

/** Parses and validates the JSON; every error names the file and the JSON path of the problem. */
function parseUpstream(file: string, bytes: Buffer): Upstream & { lists: Located[] } {
  const fail = (at: string, message: string): never => {
    throw new ContractError(`${file}: ${at ? `${at}: ` : ""}${message}`);
  };
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    return fail("", `not JSON: ${(error as Error).message}`);
  }
  const parsed = schemas().Upstream.safeParse(raw, { error: describeIssue });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return fail(jsonPath(issue.path), issue.message);
  }
  const data = parsed.data;
  // The JSON's own order of lists, so reports list rules as upstream does.
  const order = Object.keys(raw as object).filter((key): key is RuleList =>
    (RULE_LISTS as readonly string[]).includes(key),
  );
  const lists = order.flatMap((list) =>
    (data[list] as Entry[]).map((entry, i): Located => ({ entry, at: `${list}[${i}]` })),
  );
  checkIds(data.scope.surface, lists, fail);
  checkCodes(data, lists, fail);
  return { ...data, lists };
}

/** IDs are stable and unique, and all carry the contract's prefix: reports and --rules globs key on them. */
function checkIds(prefix: string, lists: Located[], fail: (at: string, message: string) => never): void {
  const seen = new Map<string, string>();
  for (const { entry, at } of lists) {
    if (!entry.id.startsWith(`${prefix}.`) || !/^[a-z0-9-]+\.[a-z0-9-]+$/.test(shortId(prefix, entry.id))) {
      fail(`${at}.id`, `"${entry.id}" is not "${prefix}.<group>.<name>"`);
    }
    const first = seen.get(entry.id);
    if (first) fail(`${at}.id`, `duplicate rule id "${entry.id}" (first at ${first}.id)`);
    seen.set(entry.id, at);
  }
}

/** One code per error rule, and the outputs table names exactly those codes: a reply is judged by code. */
function checkCodes(data: Upstream, lists: Located[], fail: (at: string, message: string) => never): void {
  const owners = new Map<number, string>();
  for (const { entry, at } of lists) {
    const code = entry.code;
    if (code === undefined) continue;
    const first = owners.get(code);
    if (first) fail(`${at}.code`, `code ${code} is also the code of ${first}`);
    owners.set(code, at);
    if (!Object.values(data.outputs.error_codes).includes(code)) {
      fail(`${at}.code`, `code ${code} is missing from outputs.error_codes`);
    }
  }
  for (const [name, code] of Object.entries(data.outputs.error_codes)) {
    if (!owners.has(code)) fail(`outputs.error_codes.${name}`, `code ${code} has no rule in error_codes`);
  }
}

function shortId(prefix: string, fullId: string): RuleId {
  return fullId.slice(prefix.length + 1);
}

// ---- our overlay ----

/** The 1-based line of the deepest node of `path` that exists (a key's own line where it has one). */
function lineOf(doc: Document, lines: LineCounter, path: readonly PropertyKey[]): number {
  const { isMap, isScalar } = yaml();
  let node: unknown = doc.contents;
  let at = node as Node | null;
  for (const key of path) {
    if (!isMap(node)) break;
    const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key);
    if (!pair) break;
    at = pair.key as Node;
    node = pair.value;
  }
  return lines.linePos(at?.range?.[0] ?? 0).line;
}

/** Parses and validates the overlay; every error names the file and line. */
function parseOverlay(file: string): Overlay {
  const { LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  const doc = parseDocument(readBytes(file).toString("utf8"), { lineCounter: lines, uniqueKeys: true });
  const yamlError = doc.errors[0];
  if (yamlError) {
    // yaml's message repeats the position and quotes the source after it: keep only what went wrong.
    const message = yamlError.message.replace(/ at line \d+, column \d+:[\s\S]*$/, "");
    throw new ContractError(`${file}:${yamlError.linePos?.[0].line ?? 1}: ${message}`);
  }
  const parsed = schemas().Overlay.safeParse(doc.toJS(), { error: describeIssue });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  // An unknown key is reported at that key, not at the mapping holding it.
  const unknown = issue.code === "unrecognized_keys" ? issue.keys[0] : undefined;
  const path = unknown === undefined ? issue.path : [...issue.path, unknown];
  const message = unknown === undefined ? issue.message : `unknown key "${unknown}"`;
  const where = jsonPath(issue.path);
  throw new ContractError(`${file}:${lineOf(doc, lines, path)}: ${where ? `${where}: ` : ""}${message}`);
}

// ---- the joined contract ----

/** A rule the overlay does not know yet is a MUST checked on the wire, so it shows as uncovered. */
const UNKNOWN_RULE: OverlayRule = { level: "MUST", observed: "wire" };

function toRule(prefix: string, entry: Entry, overlay: Overlay): Rule {
  const id = shortId(prefix, entry.id);
  const ours = overlay.rules[id] ?? UNKNOWN_RULE;
  const rule: Rule = {
    id,
    fullId: entry.id,
    group: id.slice(0, id.indexOf(".")),
    title: entry.name,
    requirement: entry.requirement,
    level: ours.level,
    observed: ours.observed,
  };
  if (ours.reason !== undefined) rule.reason = ours.reason;
  if (ours.note !== undefined) rule.note = ours.note;
  if (entry.code !== undefined) rule.code = entry.code;
  if (entry.value_type !== undefined) rule.valueType = entry.value_type;
  if (entry.params !== undefined) rule.params = entry.params;
  if (entry.result !== undefined) rule.result = entry.result;
  return rule;
}

/** A contract's facts, without its lookups: what the compiled form holds. */
export type ContractData = Omit<Contract, "rule" | "has">;

/**
 * The shipped contract and overlay, joined and validated by the build (`npm run build` calls
 * compileContract), keyed by both files' SHA-256: a compiled form that does not match the
 * files beside it is ignored, so it can never disagree with them.
 */
const COMPILED_PATH = fileURLToPath(new URL("./contract.compiled.json", import.meta.url));

const digest = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** Loads an upstream contract revision (default: the shipped one) with our overlay. */
export function loadContract(path = CONTRACT_PATH, overlayPath = OVERLAY_PATH): Contract {
  const bytes = readBytes(path);
  const key = `${digest(bytes)} ${digest(readBytes(overlayPath))}`;
  if (path === CONTRACT_PATH && overlayPath === OVERLAY_PATH) {
    const compiled = readCompiled(key);
    if (compiled) return withLookups({ ...compiled, file: path });
  }
  return withLookups(join(path, bytes, overlayPath));
}

/** Writes the compiled form of the shipped contract (the build's last step). */
export function compileContract(): void {
  const data = join(CONTRACT_PATH, readBytes(CONTRACT_PATH), OVERLAY_PATH);
  const key = `${digest(readBytes(CONTRACT_PATH))} ${digest(readBytes(OVERLAY_PATH))}`;
  writeFileSync(COMPILED_PATH, `${JSON.stringify({ key, contract: data })}\n`);
}

function readCompiled(key: string): ContractData | undefined {
  try {
    const compiled = JSON.parse(readFileSync(COMPILED_PATH, "utf8")) as { key: string; contract: ContractData };
    return compiled.key === key ? compiled.contract : undefined;
  } catch {
    return undefined; // not built (run from source): join the files
  }
}

function join(path: string, bytes: Buffer, overlayPath: string): ContractData {
  const upstream = parseUpstream(path, bytes);
  const overlay = parseOverlay(overlayPath);
  const prefix = upstream.scope.surface;
  const rules = upstream.lists.map(({ entry }) => toRule(prefix, entry, overlay));
  const optionalFields = upstream.command_fields.filter((f) => f.name !== DISCRIMINATOR);
  const outputs = upstream.outputs;
  return {
    file: path,
    sha256: digest(bytes),
    version: outputs.protocol_version,
    schemaVersion: upstream.schema_version,
    prefix,
    jsonrpc: outputs.jsonrpc_version,
    defaults: { host: outputs.default_host, port: outputs.default_port, tokenEnv: overlay.defaults.tokenEnv },
    limits: { maxLineBytes: outputs.max_line_bytes, ...overlay.limits },
    methods: outputs.methods,
    codes: Object.fromEntries(rules.flatMap((r) => (r.code === undefined ? [] : [[r.id, r.code]]))),
    commandFields: optionalFields.map((f) => ({
      field: f.name,
      rule: shortId(prefix, f.id),
      kind: FIELD_KINDS[f.value_type]!,
    })),
    rules,
  };
}

function withLookups(data: ContractData): Contract {
  const byId = new Map(data.rules.map((r) => [r.id, r]));
  return {
    ...data,
    rule(id) {
      const rule = byId.get(id);
      if (!rule) throw new ContractError(`${data.file}: no rule "${id}"`);
      return rule;
    },
    has: (id) => byId.has(id),
  };
}

/** The contract shipped with this tool. */
export const contract: Contract = loadContract();
