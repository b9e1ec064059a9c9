// A reproducer's text: the runtime every script shares (runner/reproducer*.py, as one script) with one check's plan
// and a header saying what it replays, how it judges and what its exit codes mean.
import { readFileSync } from "node:fs";
import { kindOf, oracleText } from "../../protocol/oracles.js";
import type { Oracle } from "../../protocol/verdict.js";
import { reproducibility } from "../../reports/output.js";
import type { CheckReport, Report } from "../../reports/types.js";
import { unreadableCodes } from "../../suites/harness/judge.js";
import { REDACTED } from "../../suites/harness/redact.js";
import { allChecks } from "../../suites/index.js";
import { parseEndpoint } from "../targets.js";
import { TOOL } from "../tool.js";
import type { ExportOptions, Plan } from "./plan.js";

/** The reproducer's file name for a check: "/" becomes "__", anything else outside [A-Za-z0-9._-] "_". */
export const reproducerName = (checkId: string): string =>
  `${checkId.replace(/\//g, "__").replace(/[^A-Za-z0-9._-]/g, "_")}.py`;

/** A Python string literal holding `s`, in ASCII (escapes for everything else). */
export function pyString(s: string): string {
  let out = "'";
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === "'") out += "\\'";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    else if (cp < 0x7f) out += ch;
    else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, "0")}`;
    else out += `\\U${cp.toString(16).padStart(8, "0")}`;
  }
  return `${out}'`;
}

/** A Python literal of a JSON value. */
export function pyValue(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "None";
  if (typeof v === "string") return pyString(v);
  if (Array.isArray(v)) return `[${v.map(pyValue).join(", ")}]`;
  return `{${Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .map(([k, x]) => `${pyString(k)}: ${pyValue(x)}`)
    .join(", ")}}`;
}

/** Text for a comment line: no control characters, nothing Python reads as a line break. */
const commentText = (s: string) =>
  s.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );

const comment = (label: string, value: string | undefined) =>
  value === undefined || value === ""
    ? []
    : commentText(`${label}${value}`)
        .split("\n")
        .map((line, i) => `# ${i ? "    " : ""}${line}`.trimEnd());

/** The oracle as the script prints it, or what the script does without one. */
const judgementText = (oracle: Oracle | undefined) =>
  oracle ? oracleText(oracle) : "none: the reply is compared with the one recorded when the check failed";

/** The runtime's modules, each after those it imports; the last holds the plan's marker (copied beside the compiled code). */
export const RUNTIME_MODULES = [
  "reproducer_wire.py",
  "reproducer_ledger.py",
  "reproducer_events.py",
  "reproducer_oracles.py",
  "reproducer.py",
] as const;
let runtime: string | undefined;
const MARKER = "# The plan of one check goes here.\n";

/**
 * The runtime as one standalone script: its modules in order, each import of the standard library
 * once at the top, their imports of one another dropped (one namespace holds them all).
 */
export function runtimeScript(): string {
  const imports = new Set<string>();
  const bodies = RUNTIME_MODULES.map((file) =>
    readFileSync(new URL(`../${file}`, import.meta.url), "utf8").replace(
      /^(?:import (\w+)|from reproducer_\w+ import [^\n]*)\n/gm,
      (_, module: string | undefined) => {
        if (module) imports.add(`import ${module}`);
        return "";
      },
    ),
  );
  return `${[...imports].sort().join("\n")}\n\n\n${bodies.join("\n\n")}`;
}

/** The script for one failing check whose case the report holds whole. */
export function scriptOf(check: CheckReport, plan: Plan, rules: string[], report: Report, o: ExportOptions): string {
  runtime ??= runtimeScript();
  const { contract } = o;
  const at = !report.target.spawned && report.target.endpoint ? parseEndpoint(report.target.endpoint) : undefined;
  const host = at?.host ?? contract.defaults.host;
  const port = at?.port ?? contract.defaults.port;
  const rpc = (method: string, params: object, id: string) =>
    `${JSON.stringify({ jsonrpc: contract.jsonrpc, id, method, params })}\n`;
  const session = [
    ...(o.tokenConfigured ? [rpc("auth", { token: REDACTED }, "liveness-auth")] : []),
    rpc("ping", {}, "liveness"),
  ];
  const name = reproducerName(check.id);
  const notReplayed = check.oracle && kindOf(check.oracle).notReplayed?.(check.oracle);
  const header = [
    "#!/usr/bin/env python3",
    `# Reproducer of the failing check ${check.id}, exported by ${TOOL.name} ${TOOL.version}.`,
    "#",
    ...comment("Rules:       ", rules.join(", ")),
    ...comment("Requirement: ", check.requirement),
    ...comment("The check:   ", check.description),
    ...comment("Failure:     ", check.message),
    ...comment("Expected:    ", check.expected),
    ...comment("Actual:      ", check.actual),
    ...comment("Case:        ", check.counterexample),
    ...comment("Rechecked:   ", reproducibility(check)),
    ...comment("Re-run with the tool: ", check.replay),
    "#",
    "# It re-sends the exact bytes of the minimal case as the report recorded them (the same",
    "# connections, TCP segments and pauses between writes), then judges the first reply to the",
    "# request the check judged: first as every reply (strict UTF-8, one JSON object without NaN, the",
    `# jsonrpc version "${contract.jsonrpc}", the request's id echoed, exactly one of result and error),`,
    "# then by the check's oracle.",
    ...(plan.steps.some((s) => s.op === "read" && s.waits)
      ? [
          "# Where the check waited for a command's completion before it went on, the script waits for it too",
          "# (polling events, at most twice the timeout), so a slower bridge is read at the same point.",
        ]
      : []),
    ...(check.oracle
      ? comment("Oracle:      ", judgementText(check.oracle))
      : comment("No oracle:   ", `${noOracleReason(check.id)}: the reply is compared with the one recorded`)),
    ...(plan.probe
      ? ["# After the case it asks, as the check did, whether the bridge still answers ping on a fresh connection."]
      : []),
    "#",
    `# Usage: python3 ${name} [--host HOST] [--port PORT] [--timeout SECONDS] [--allow-remote] [--verbose]`,
    ...(plan.needsToken
      ? [`# The token is read from the environment variable ${o.tokenEnv}, as the run did; it is not in this file.`]
      : []),
    "#",
    "# Exit codes:",
    "#   0  the bridge now behaves: the reply meets the rule",
    "#   1  the bridge still breaks the rule",
    `#   2  the token is missing or refused, or bad usage${notReplayed ? `; or ${notReplayed} (COULD NOT REPLAY)` : ""}`,
    ...(check.oracle ? [] : ["#   3  the reply differs from the one recorded: changed, judge it yourself"]),
    "#   4  the bridge could not be reached",
    "#",
  ];
  const data = [
    MARKER,
    `CHECK = ${pyString(check.id)}`,
    `RULES = ${pyValue(rules)}`,
    `REQUIREMENT = ${pyString(check.requirement ?? "")}`,
    `EXPECTED = ${pyString(check.expected ?? "")}`,
    `ORACLE = ${pyValue(check.oracle ?? null)}`,
    `ORACLE_TEXT = ${pyString(judgementText(check.oracle))}`,
    `DEFAULT_HOST = ${pyString(host)}`,
    `DEFAULT_PORT = ${port}`,
    `DEFAULT_TIMEOUT = ${o.timeoutMs / 1000}`,
    `TOKEN_ENV = ${pyString(o.tokenEnv)}`,
    `NEEDS_TOKEN = ${pyValue(plan.needsToken)}`,
    `REDACTED = ${pyString(REDACTED)}`,
    `JSONRPC = ${pyString(contract.jsonrpc)}`,
    `PARSE_ERROR = ${unreadableCodes(contract).parse}`,
    `INVALID_REQUEST = ${unreadableCodes(contract).invalidRequest}`,
    `MAX_LINE_BYTES = ${contract.limits.maxLineBytes}`,
    `EVENTS_PAGE = ${contract.limits.eventsLimitMax}`,
    "",
    "# The exchange, as recorded: connections opened, bytes sent (the token as REDACTED), replies read.",
    "STEPS = [",
    ...plan.steps.map((s) => `    ${pyValue(s)},`),
    "]",
    "",
    "# A fresh session's requests: authorized where a token is set, then a ping.",
    `SESSION = ${pyValue(session)}`,
    "# Whether the case ends, as the check did, by asking whether the bridge still answers on a fresh connection.",
    `PROBE = ${pyValue(plan.probe)}`,
    "",
  ];
  if (!runtime.includes(MARKER)) throw new Error("runner/reproducer.py has lost its plan marker");
  return `${header.join("\n")}\n${runtime.replace(MARKER, data.join("\n"))}`;
}

/** Why a check has no machine oracle, as the check says. */
export function noOracleReason(checkId: string): string {
  return allChecks.find((c) => c.id === checkId)?.noOracle ?? "the check records none for this failure";
}
