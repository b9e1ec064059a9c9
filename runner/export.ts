// --export DIR: one standalone reproducer per failing check, a dependency-free Python 3 script
// that re-sends the recorded minimal case byte for byte and judges the reply as the check did.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Contract } from "../protocol/contract.js";
import type { Oracle } from "../protocol/verdict.js";
import { makeDirectory, reproducibility } from "../reports/output.js";
import type { CheckReport, Report, TranscriptEntry } from "../reports/types.js";
import { NOTE } from "../suites/harness/connection.js";
import { ALONGSIDE, PROBE_NOTE } from "../suites/harness/harness.js";
import { REDACTED } from "../suites/harness/redact.js";
import { isGapNote } from "../suites/harness/transcript.js";
import { UsageError } from "./options.js";
import { parseEndpoint } from "./targets.js";
import { TOOL } from "./tool.js";

export interface ExportOptions {
  contract: Contract;
  /** The environment variable the run read its token from; the scripts read it too. */
  tokenEnv: string;
  /** Whether the run had a token (the scripts then authorize as the run did). */
  tokenConfigured: boolean;
  timeoutMs: number;
}

/** The reproducer's file name for a check: "/" becomes "__", anything else outside [A-Za-z0-9._-] "_". */
export const reproducerName = (checkId: string): string =>
  `${checkId.replace(/\//g, "__").replace(/[^A-Za-z0-9._-]/g, "_")}.py`;

/** Writes DIR/<check>.py for every failing check of the report; returns the files written. */
export function exportReproducers(dir: string, report: Report, o: ExportOptions): string[] {
  const failing = new Map<string, { check: CheckReport; rules: string[] }>();
  for (const rule of report.rules) {
    for (const check of rule.checks) {
      if (check.verdict !== "fail") continue;
      const seen = failing.get(check.id);
      if (seen) seen.rules.push(rule.id);
      else failing.set(check.id, { check, rules: [rule.id] });
    }
  }
  const written: string[] = [];
  try {
    if (failing.size) makeDirectory(dir);
    for (const { check, rules } of failing.values()) {
      const file = join(dir, reproducerName(check.id));
      writeFileSync(file, reproducerScript(check, rules, report, o), { mode: 0o755 });
      written.push(file);
    }
  } catch (err) {
    throw new UsageError(`--export: cannot write to ${dir}: ${(err as Error).message}`);
  }
  return written;
}

/** What came back after a request, as the transcript recorded it. */
type Recorded =
  | { kind: "line"; text?: string; base64?: string; length: number; truncated?: true }
  | { kind: "closed" | "reset" | "timeout" | "oversized" };

type Step =
  | { op: "open"; alongside: boolean }
  | {
      op: "send";
      text?: string;
      base64?: string;
      /** A long send: after the bytes above, `run` (base64) `times` over, then `tail` (base64). */
      run?: string;
      times?: number;
      tail?: string;
      cuts?: number[];
      pause_ms?: number;
      gap_ms?: number;
      /** An auth request carrying the configured token: its reply tells whether the token is right. */
      auth?: true;
      judged?: true;
    }
  | { op: "half_close" }
  | { op: "read"; count: number; recorded: Recorded[]; judged?: true };

interface Plan {
  steps: Step[];
  probe: boolean;
  /** Why the case cannot be re-sent as it ran, where it cannot. */
  unreproducible?: string;
  needsToken: boolean;
}

/** A marker in the tool's style standing for bytes a report does not show (besides the redacted token). */
const HIDDEN = /«[a-z][a-z ,:.-]*»/;
const OPENED = /^connection \d+ opened/;

const bytesOf = (e: TranscriptEntry): Buffer =>
  e.base64 !== undefined ? Buffer.from(e.base64, "base64") : Buffer.from(e.text ?? "", "utf8");

/** All the bytes of a send step. */
function sentBytes(step: Extract<Step, { op: "send" }>): Buffer {
  const head = step.base64 !== undefined ? Buffer.from(step.base64, "base64") : Buffer.from(step.text ?? "", "utf8");
  if (step.run === undefined) return head;
  const run = Buffer.from(step.run, "base64");
  return Buffer.concat([
    head,
    Buffer.alloc(run.length * (step.times ?? 0), run),
    Buffer.from(step.tail ?? "", "base64"),
  ]);
}

/** Turns a recorded transcript into the steps a script replays. */
export function planOf(check: CheckReport, o: ExportOptions): Plan {
  const entries = check.transcript ?? [];
  const probeAt = entries.findIndex((e) => e.dir === "event" && e.text === PROBE_NOTE);
  const own = probeAt === -1 ? entries : entries.slice(0, probeAt);
  const plan: Plan = { steps: [], probe: probeAt !== -1, needsToken: false };
  const redacted = Buffer.from(REDACTED, "utf8");
  if (!entries.length)
    plan.unreproducible = "the report recorded no bytes of this case (no transcript, or an empty one)";
  else if (entries.some((e) => e.dir === "event" && isGapNote(e.text ?? "")))
    plan.unreproducible = "the report keeps only the start and the end of this case's long exchange";
  const steps = plan.steps;
  let read: Extract<Step, { op: "read" }> | undefined;
  let lastSend: { entry: TranscriptEntry; step: Extract<Step, { op: "send" }> } | undefined;
  let sentSinceRead = false;
  for (const e of own) {
    if (e.dir === "event") {
      const text = e.text ?? "";
      if (OPENED.test(text)) {
        steps.push({ op: "open", alongside: text.endsWith(ALONGSIDE) });
        read = undefined;
        lastSend = undefined;
      } else if (text === NOTE.halfClosed) {
        steps.push({ op: "half_close" });
        read = undefined;
      }
      continue;
    }
    if (e.dir === "send") {
      const step: Extract<Step, { op: "send" }> = {
        op: "send",
        ...(e.base64 !== undefined ? { base64: e.base64 } : { text: e.text ?? "" }),
        ...(e.truncated && e.rest ? { run: e.rest.run, times: e.rest.times, tail: e.rest.tail } : {}),
      };
      if (e.truncated && !e.rest)
        plan.unreproducible ??= `the report keeps only the first ${bytesOf(e).length} of the ${e.length} bytes of a request`;
      const bytes = sentBytes(step);
      const hidden = HIDDEN.exec(bytes.toString("utf8").split(REDACTED).join(""));
      if (hidden) plan.unreproducible ??= `the report hides part of a request (${hidden[0]})`;
      if (bytes.includes(redacted)) plan.needsToken = true;
      if (e.cuts?.length) step.cuts = e.cuts;
      if (e.pauseMs) step.pause_ms = e.pauseMs;
      // Back-to-back writes keep the pause between them: a bridge may depend on reading them apart.
      if (lastSend && sentSinceRead) {
        const busy = (lastSend.entry.cuts?.length ?? 0) * (lastSend.entry.pauseMs ?? 0);
        const gap = Math.round(e.t - lastSend.entry.t - busy);
        if (gap >= 1) step.gap_ms = Math.min(gap, o.timeoutMs);
      }
      if (isTokenAuth(e.text)) step.auth = true;
      steps.push(step);
      lastSend = { entry: e, step };
      sentSinceRead = true;
      read = undefined;
      continue;
    }
    // A received line; one without its LF is what a closing bridge left unterminated.
    sentSinceRead = false;
    if (!read) {
      read = { op: "read", count: 0, recorded: [] };
      steps.push(read);
    }
    if (complete(e)) {
      read.count++;
      read.recorded.push({
        kind: "line",
        ...(e.base64 !== undefined ? { base64: e.base64 } : { text: (e.text ?? "").replace(/\n$/, "") }),
        length: e.length,
        ...(e.truncated ? { truncated: true as const } : {}),
      });
    }
  }
  markJudged(plan, own, check.oracle);
  if (plan.probe && o.tokenConfigured) plan.needsToken = true;
  return plan;
}

/** Whether a recorded received line ended with its LF (one recorded at a close did not). */
function complete(e: TranscriptEntry): boolean {
  if (e.truncated) return true;
  if (e.text !== undefined) return e.text.endsWith("\n");
  return Buffer.from(e.base64 ?? "", "base64").length < e.length;
}

function isTokenAuth(text: string | undefined): boolean {
  try {
    const r = JSON.parse(text ?? "") as { method?: unknown; params?: { token?: unknown } };
    return r.method === "auth" && r.params?.token === REDACTED;
  } catch {
    return false;
  }
}

/**
 * The last request of the case is the one judged: its first reply is what the oracle or the
 * comparison is about. Where the transcript read nothing after it, a read is added.
 */
function markJudged(plan: Plan, own: TranscriptEntry[], oracle: Oracle | undefined): void {
  const steps = plan.steps;
  const at = steps.map((s) => s.op).lastIndexOf("send");
  if (at === -1) {
    plan.unreproducible ??= "the case sent nothing the report recorded";
    return;
  }
  const send = steps[at] as Extract<Step, { op: "send" }>;
  send.judged = true;
  let readAt = at + 1;
  while (steps[readAt]?.op === "half_close") readAt++;
  let read = steps[readAt];
  if (read?.op !== "read") {
    read = { op: "read", count: 0, recorded: [] };
    steps.splice(readAt, 0, read);
  }
  read.judged = true;
  // How the exchange after the judged request ended, where fewer lines came than were read.
  const after = own.slice(own.map((e) => e.dir).lastIndexOf("send") + 1);
  const end = after.find(
    (e) =>
      (e.dir === "recv" && !complete(e)) ||
      (e.dir === "event" &&
        (e.text === NOTE.peerFin || e.text?.startsWith(NOTE.socketError) || e.text?.startsWith(NOTE.oversized))),
  );
  const kind: Recorded["kind"] = !end
    ? "timeout"
    : end.dir === "recv" || end.text === NOTE.peerFin
      ? "closed"
      : end.text?.startsWith(NOTE.socketError)
        ? "reset"
        : "oversized";
  const sent = sentBytes(send);
  // Without an oracle the replies are compared: as many are read as the request has lines, so a fixed bridge shows.
  const lines = oracle ? 0 : sent.reduce((n, x) => n + (x === 0x0a ? 1 : 0), 0);
  read.count = Math.max(1, read.recorded.length, lines);
  // Fewer lines came than are read: then came the end recorded (or nothing within the timeout).
  if (read.recorded.length < read.count) read.recorded.push({ kind });
}

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

function oracleText(oracle: Oracle | undefined): string {
  if (!oracle) return "none: the reply is compared with the one recorded when the check failed";
  switch (oracle.kind) {
    case "error":
      return `an error with code ${oracle.codes.join(" or ")}${oracle.orClose ? ", or the connection closed" : ""}`;
    case "result":
      return `a result${oracle.equals ? ` holding ${JSON.stringify(oracle.equals)}` : ""}${
        oracle.positiveIntegers ? ` with ${oracle.positiveIntegers.join(", ")} an integer above 0` : ""
      }`;
    case "alive":
      return "the bridge still answers ping on a fresh connection after the case";
  }
}

/** The script for one failing check. */
export function reproducerScript(check: CheckReport, rules: string[], report: Report, o: ExportOptions): string {
  const plan = planOf(check, o);
  const { contract } = o;
  const at = !report.target.spawned && report.target.endpoint ? parseEndpoint(report.target.endpoint) : undefined;
  const host = at?.host ?? contract.defaults.host;
  const port = at?.port ?? contract.defaults.port;
  const rpc = (method: string, params: object, id: string) =>
    `${JSON.stringify({ jsonrpc: contract.jsonrpc, id, method, params })}\n`;
  const probe = plan.probe
    ? [...(o.tokenConfigured ? [rpc("auth", { token: REDACTED }, "liveness-auth")] : []), rpc("ping", {}, "liveness")]
    : [];
  const name = reproducerName(check.id);
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
    "# case's last request: first as every reply (strict UTF-8, one JSON object without NaN, the",
    `# jsonrpc version "${contract.jsonrpc}", the request's id echoed, exactly one of result and error),`,
    "# then by the check's oracle where it has one; without one, that reply is compared with the",
    "# one recorded when the check failed.",
    ...comment("Oracle:      ", oracleText(check.oracle)),
    ...(plan.probe
      ? ["# After the case it asks, as the check did, whether the bridge still answers ping on a fresh connection."]
      : []),
    ...(plan.unreproducible ? comment("NOT REPRODUCIBLE from the report: ", `${plan.unreproducible}.`) : []),
    "#",
    `# Usage: python3 ${name} [--host HOST] [--port PORT] [--timeout SECONDS] [--allow-remote] [--verbose]`,
    ...(plan.needsToken
      ? [`# The token is read from the environment variable ${o.tokenEnv}, as the run did; it is not in this file.`]
      : []),
    "#",
    "# Exit codes:",
    "#   0  the bridge now behaves: the reply meets the rule",
    "#   1  the bridge still breaks the rule",
    "#   2  the case cannot be reproduced from the report, the token is missing or refused, or bad usage",
    "#   3  no oracle, and the reply differs from the one recorded: changed, judge it yourself",
    "#   4  the bridge could not be reached",
    "",
  ];
  const data = [
    `CHECK = ${pyString(check.id)}`,
    `RULES = ${pyValue(rules)}`,
    `REQUIREMENT = ${pyString(check.requirement ?? "")}`,
    `EXPECTED = ${pyString(check.expected ?? "")}`,
    `ORACLE = ${pyValue(check.oracle ?? null)}`,
    `ORACLE_TEXT = ${pyString(oracleText(check.oracle))}`,
    `UNREPRODUCIBLE = ${pyValue(plan.unreproducible ?? null)}`,
    `DEFAULT_HOST = ${pyString(host)}`,
    `DEFAULT_PORT = ${port}`,
    `DEFAULT_TIMEOUT = ${o.timeoutMs / 1000}`,
    `TOKEN_ENV = ${pyString(o.tokenEnv)}`,
    `NEEDS_TOKEN = ${pyValue(plan.needsToken)}`,
    `REDACTED = ${pyString(REDACTED)}`,
    `JSONRPC = ${pyString(contract.jsonrpc)}`,
    `PARSE_ERROR = ${contract.codes["error.parse"]}`,
    `INVALID_REQUEST = ${contract.codes["error.invalid-request"]}`,
    `MAX_LINE_BYTES = ${contract.limits.maxLineBytes}`,
    "",
    "# The exchange, as recorded: connections opened, bytes sent (the token as REDACTED), replies read.",
    "STEPS = [",
    ...plan.steps.map((s) => `    ${pyValue(s)},`),
    "]",
    "",
    "# The liveness probe after the case (empty where the check made none).",
    `PROBE = ${pyValue(probe)}`,
    "",
  ];
  return [...header, PY_IMPORTS, ...data, PY_RUNTIME].join("\n");
}

const PY_IMPORTS = `import argparse
import base64
import decimal
import errno
import ipaddress
import json
import os
import socket
import sys
import time
`;

// The replay and the judgement, the same in every reproducer.
const PY_RUNTIME = String.raw`
BEHAVES, BREAKS, CANNOT, CHANGED, UNREACHABLE = 0, 1, 2, 3, 4


def reject_constant(name):
    raise ValueError("not JSON: " + name)


def strict_json(text, **hooks):
    """RFC 8259 JSON: no NaN or Infinity; numbers kept exact."""
    return json.loads(
        text, parse_constant=reject_constant, parse_float=decimal.Decimal, parse_int=decimal.Decimal, **hooks
    )


def is_number(v):
    return isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)


def is_integer(v):
    return is_number(v) and decimal.Decimal(v).is_finite() and decimal.Decimal(v) == decimal.Decimal(v).to_integral_value()


def same(a, b):
    """The same JSON value and type (numbers compared exactly by value: 1.0 is 1)."""
    if is_number(a) and is_number(b):
        return decimal.Decimal(a) == decimal.Decimal(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def request_ids(line):
    """The ids a request line may be read as holding (a name given twice: either); None: any id (not JSON)."""
    if line is None:
        return None
    seen = []

    def keep(pairs):
        seen.append(pairs)
        return dict(pairs)

    try:
        value = strict_json(line.decode("utf-8"), object_pairs_hook=keep)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return [None]
    return [v for k, v in seen[-1] if k == "id"] or [None]


def judge(line, ids):
    """Judges a reply line as every reply is judged: (response, None), or (None, what is wrong)."""
    if len(line) > MAX_LINE_BYTES:
        return None, "wire.line-limit: the response line is longer than %d bytes" % MAX_LINE_BYTES
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None, "wire.utf8: the response is not strict UTF-8"
    if text.startswith("\ufeff"):
        return None, "wire.ndjson: the response line starts with a byte order mark, which is not JSON"
    try:
        value = strict_json(text)
    except (ValueError, RecursionError):
        return None, "wire.ndjson: the response line is not JSON (RFC 8259: no NaN, comments, trailing commas)"
    if not isinstance(value, dict):
        return None, "wire.ndjson: the response line is not a JSON object"
    if not (isinstance(value.get("jsonrpc"), str) and value["jsonrpc"] == JSONRPC):
        return None, 'wire.response-envelope: the response\'s jsonrpc is not "%s"' % JSONRPC
    if "id" not in value:
        return None, "wire.response-envelope: the response has no id"
    if ("result" in value) == ("error" in value):
        return None, "wire.response-envelope: the response must hold exactly one of result and error"
    error = value.get("error")
    if "error" in value and not (
        isinstance(error, dict) and is_integer(error.get("code")) and isinstance(error.get("message"), str)
    ):
        return None, "wire.response-envelope: error must be an object with an integer code and a string message"
    unreadable = isinstance(error, dict) and value["id"] is None and error.get("code") in (PARSE_ERROR, INVALID_REQUEST)
    if ids is not None and not unreadable and not any(same(value["id"], i) for i in ids):
        return None, "wire.response-envelope: the response does not echo the request id as the same JSON value and type"
    return value, None


class Peer:
    """One TCP connection: writes cut into segments, line reads bounded by a timeout."""

    def __init__(self, host, port, timeout):
        self.timeout = timeout
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        self.end = None
        self.discarding = False
        self.unterminated = b""

    def write(self, data, cuts, pause_ms):
        """Sends data, cut at cuts into writes of their own; returns the first complete line now sent."""
        line = None
        if b"\n" in data:
            line = (self.unterminated + data).split(b"\n", 1)[0]
            self.unterminated = data.rsplit(b"\n", 1)[1]
        else:
            self.unterminated += data
        points = [c for c in cuts if 0 < c < len(data)] + [len(data)]
        start = 0
        # A peer that stops reading holds a write up for one timeout at most.
        self.sock.settimeout(self.timeout)
        for i, stop in enumerate(points):
            if i:
                time.sleep(max(pause_ms, 1) / 1000.0)
            try:
                self.sock.sendall(data[start:stop])
            except OSError:
                break
            start = stop
        return line

    def half_close(self):
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def read(self, timeout):
        """("line", bytes), ("oversized", n), ("closed",), ("reset", code) or ("timeout",)."""
        deadline = time.monotonic() + timeout
        while True:
            at = self.buffer.find(b"\n")
            if at >= 0:
                line, self.buffer = self.buffer[:at], self.buffer[at + 1 :]
                if self.discarding:
                    self.discarding = False
                    continue
                if len(line) > MAX_LINE_BYTES:
                    return ("oversized", len(line))
                return ("line", line)
            if self.discarding:
                self.buffer = b""
            elif len(self.buffer) > MAX_LINE_BYTES:
                n, self.buffer, self.discarding = len(self.buffer), b"", True
                return ("oversized", n)
            if self.end:
                return self.end
            left = deadline - time.monotonic()
            if left <= 0:
                return ("timeout",)
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return ("timeout",)
            except OSError as err:
                self.end = ("reset", errno.errorcode.get(err.errno, str(err)))
                continue
            if not chunk:
                self.end = ("closed",)
            self.buffer += chunk

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def recorded_outcome(r):
    if r["kind"] != "line":
        return (r["kind"],)
    data = base64.b64decode(r["base64"]) if "base64" in r else r["text"].encode("utf-8")
    return ("line", data, r["length"], r.get("truncated", False))


def same_outcome(new, old):
    """Whether a reply now is the one recorded (closed and reset alike; a recorded line cut short by its prefix)."""
    family = lambda kind: "closed" if kind in ("closed", "reset") else kind
    if family(new[0]) != family(old[0]):
        return False
    if new[0] != "line":
        return True
    if old[3]:
        return new[1][: len(old[1])] == old[1] and len(new[1]) + 1 == old[2]
    return new[1] == old[1]


def printable(text):
    """Text on one line: control characters as escapes."""
    return "".join(
        {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c, "\\x%02x" % ord(c)) if ord(c) < 0x20 or ord(c) == 0x7F else c
        for c in text
    )


def describe(outcome, timeout):
    kind = outcome[0]
    if kind == "line":
        data = outcome[1]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = "bytes (base64) " + base64.b64encode(data).decode("ascii")
        return printable(text) if len(text) <= 400 else "%s... (%d chars)" % (printable(text[:400]), len(text))
    if kind == "closed":
        return "connection closed"
    if kind == "reset":
        return "connection reset (%s)" % outcome[1] if len(outcome) > 1 else "connection reset"
    if kind == "oversized":
        return "a response line over the limit (%d bytes without LF)" % outcome[1] if len(outcome) > 1 else "a response line over the limit"
    return "no response within %gs" % timeout


def apply_oracle(oracle, outcome, response):
    """None where the reply meets the oracle, else what is wrong."""
    kind = oracle["kind"]
    if kind == "alive":
        return None
    if kind == "error":
        if oracle.get("orClose") and outcome[0] in ("closed", "reset"):
            return None
        code = response.get("error", {}).get("code") if isinstance(response, dict) else None
        if code is not None and any(same(code, c) for c in oracle["codes"]):
            return None
        return "the reply is not " + ORACLE_TEXT
    if kind == "result":
        result = response.get("result") if isinstance(response, dict) else None
        if not isinstance(result, dict):
            return "the reply is not a result object"
        for name, value in (oracle.get("equals") or {}).items():
            if name not in result or not same(result[name], value):
                return "the result's %s is not %s" % (name, json.dumps(value))
        for name in oracle.get("positiveIntegers") or []:
            if not (is_integer(result.get(name)) and result[name] > 0):
                return "the result's %s is not an integer above 0" % name
        return None
    return None


def is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def main():
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    parser = argparse.ArgumentParser(description="Re-sends the minimal case of the failing check " + CHECK + ".")
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds to wait for each reply")
    parser.add_argument("--allow-remote", action="store_true", help="connect to a host that is not loopback")
    parser.add_argument("--verbose", "-v", action="store_true", help="show every step of the exchange")
    args = parser.parse_args()
    if not (args.timeout > 0):
        parser.error("--timeout must be a positive number of seconds")
    say = print
    say("check:    " + CHECK + " (" + ", ".join(RULES) + ")")
    if UNREPRODUCIBLE:
        say("CANNOT REPRODUCE from the report: " + UNREPRODUCIBLE + ".")
        return CANNOT
    token = os.environ.get(TOKEN_ENV, "")
    if NEEDS_TOKEN and not token:
        say("set " + TOKEN_ENV + " to the bridge's token, as the run did (it is not in this file)")
        return CANNOT
    if not is_loopback(args.host) and not args.allow_remote:
        say("refusing to connect to " + args.host + ", which is not loopback: add --allow-remote")
        return CANNOT
    token_forms = []
    if token:
        token_forms = sorted({json.dumps(token, ensure_ascii=False)[1:-1].encode("utf-8"), token.encode("utf-8")}, key=len, reverse=True)
    redacted = REDACTED.encode("utf-8")

    def fill(data):
        return data.replace(redacted, token_forms[0]) if token_forms else data

    def hide(data):
        for form in token_forms:
            data = data.replace(form, redacted)
        return data

    def step_bytes(step):
        data = base64.b64decode(step["base64"]) if "base64" in step else step["text"].encode("utf-8")
        if "run" in step:
            data += base64.b64decode(step["run"]) * step["times"] + base64.b64decode(step["tail"])
        return data

    def show(outcome):
        return describe((outcome[0], hide(outcome[1])) + tuple(outcome[2:]) if outcome[0] == "line" else outcome, args.timeout)

    peers, peer, problems = [], None, []
    judged_send, judged_ids, judged, recorded = None, None, [], []
    last_send, lost = None, False
    opened = 0
    for step in STEPS:
        op = step["op"]
        if op == "open":
            if not step.get("alongside"):
                for p in peers:
                    p.close()
                peers = []
            try:
                peer = Peer(args.host, args.port, args.timeout)
            except OSError as err:
                if opened == 0:
                    say("cannot connect to %s:%d: %s" % (args.host, args.port, err))
                    return UNREACHABLE
                problems.append("the bridge stopped accepting connections (%s)" % err)
                lost = True
                break
            peers.append(peer)
            opened += 1
            if args.verbose:
                say("  connection %d opened" % opened)
        elif peer is None:
            continue
        elif op == "send":
            if step.get("gap_ms"):
                time.sleep(step["gap_ms"] / 1000.0)
            data = step_bytes(step)
            line = peer.write(fill(data), step.get("cuts", []), step.get("pause_ms", 0))
            last_send = step
            if args.verbose:
                say("  sent     " + describe(("line", data.rstrip(b"\n")), args.timeout))
            if step.get("judged"):
                judged_send, judged_ids = data, request_ids(line)
        elif op == "half_close":
            peer.half_close()
            if args.verbose:
                say("  half-closed (FIN)")
        elif op == "read":
            results = []
            for _ in range(step["count"]):
                outcome = peer.read(args.timeout)
                results.append(outcome)
                if args.verbose:
                    say("  received " + show(outcome))
                if outcome[0] != "line":
                    break
            for i, outcome in enumerate(results):
                if outcome[0] == "oversized":
                    problems.append("wire.line-limit: a response line is longer than %d bytes" % MAX_LINE_BYTES)
                if outcome[0] != "line":
                    continue
                response, wrong = judge(outcome[1], judged_ids if step.get("judged") and i == 0 else None)
                if wrong:
                    problems.append(wrong)
                elif step.get("judged") and i == 0 and ORACLE:
                    wrong = apply_oracle(ORACLE, outcome, response)
                    if wrong:
                        problems.append(wrong)
                elif not step.get("judged") and last_send and last_send.get("auth") and i == 0:
                    if not (isinstance(response.get("result"), dict) and response["result"].get("authorized") is True):
                        say("the bridge did not authorize the token in " + TOKEN_ENV + ": set it to the bridge's token")
                        return CANNOT
            if step.get("judged"):
                judged, recorded = results, [recorded_outcome(r) for r in step["recorded"]]
                if ORACLE and results and results[0][0] != "line":
                    wrong = apply_oracle(ORACLE, results[0], None)
                    if wrong:
                        problems.append(wrong)
    for p in peers:
        p.close()

    if PROBE and not lost:
        alive, why = probe(args, fill)
        if args.verbose:
            say("  liveness probe: " + ("answered" if alive else why))
        if not alive:
            problems.append(why)

    say("sent:     " + (describe(("line", judged_send.rstrip(b"\n")), args.timeout) if judged_send is not None else "-"))
    say("expected: " + (EXPECTED or "-"))
    say("oracle:   " + ORACLE_TEXT)
    say("now:      " + ("; ".join(show(o) for o in judged) if judged else "-"))
    say("recorded: " + ("; ".join(describe(o, args.timeout) for o in recorded) if recorded else "-"))
    if problems:
        say("STILL BROKEN: " + "; ".join(problems))
        return BREAKS
    if ORACLE:
        say("BEHAVES: the reply meets the rule")
        return BEHAVES
    now = [(o[0], hide(o[1])) if o[0] == "line" else o for o in judged]
    if len(now) == len(recorded) and all(same_outcome(n, r) for n, r in zip(now, recorded)):
        say("STILL BROKEN: the same reply as when the check failed")
        return BREAKS
    say("CHANGED: the reply differs from the one recorded when the check failed; judge it yourself")
    return CHANGED


def probe(args, fill):
    """Whether the bridge still answers ping on a fresh connection (authorized first where a token is set)."""
    try:
        peer = Peer(args.host, args.port, args.timeout)
    except OSError as err:
        return False, "after the case the bridge stopped accepting connections (%s)" % err
    try:
        outcome = ("timeout",)
        for request in PROBE:
            data = fill(request.encode("utf-8"))
            peer.write(data, [], 0)
            outcome = peer.read(args.timeout)
            if outcome[0] != "line":
                break
        if outcome[0] == "line":
            response, wrong = judge(outcome[1], None)
            if response and isinstance(response.get("result"), dict) and response["result"].get("ok") is True:
                return True, None
        return False, "after the case the bridge no longer answers ping on a fresh connection: " + describe(outcome, args.timeout)
    finally:
        peer.close()


if __name__ == "__main__":
    sys.exit(main())
`;
