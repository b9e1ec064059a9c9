import type fc from "fast-check";
import type { Contract, ErrorRuleId, RuleId } from "../protocol/contract.js";
import type { Connection, ReadResult, TranscriptEntry } from "../runner/connection.js";

export type Verdict = "pass" | "fail" | "warn" | "skip" | "error";

/** Worst first: a rule's verdict is the worst of its checks'. */
export const VERDICT_ORDER: readonly Verdict[] = ["fail", "error", "warn", "pass", "skip"];
export const worst = (a: Verdict, b: Verdict): Verdict => (VERDICT_ORDER.indexOf(a) <= VERDICT_ORDER.indexOf(b) ? a : b);

/** What a check concluded. */
export interface Finding {
  verdict: Verdict;
  message: string;
  expected?: string;
  actual?: string;
  /** The rules this finding is about, where narrower than the check's own (or another's, e.g. a malformed response). */
  rules?: RuleId[];
  counterexample?: string;
  seed?: number;
  path?: string;
  transcript?: TranscriptEntry[];
}

export interface Check {
  /** Stable: "<rule>/<case>", e.g. "error.method-not-found/unknown-method". */
  id: string;
  rules: readonly RuleId[];
  /** What it sends. */
  description: string;
  /** The rule text it checks. */
  requirement: string;
  run(ctx: CheckContext): Promise<Finding>;
}

/** A parsed response line that passed the envelope judge. */
export interface Response {
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export type Reply = { kind: "response"; response: Response; raw: Buffer } | Exclude<ReadResult, { kind: "line" }>;

export interface ReadOptions {
  /** The id the response must echo; taken from the request object when not given (null for raw text or bytes). */
  expectId?: unknown;
  /** Also accept id null (-32600 and -32700 with id null are always accepted). */
  orNullId?: boolean;
  /** Accept any id: the request's id is unreadable by design (e.g. malformed UTF-8 inside it). */
  anyId?: boolean;
  timeoutMs?: number;
}

export interface CallOptions extends ReadOptions {
  splitAt?: number[];
  delayMs?: number;
}

export interface PropertyOptions<T = unknown> {
  /** Cases to try (default: the profile's run count). */
  runs?: number;
  /** Inputs tried first, before the generated ones (e.g. every advertised type with every ill-typed value). */
  examples?: T[];
  /** Check the bridge still answers on a fresh connection after each case. */
  liveness?: boolean;
  /** Once a case fails, restart a bridge this tool owns before every shrink attempt (and after the last), so the minimal case replays alike; against an endpoint, do not shrink. */
  restartAfterFailure?: boolean;
}

/** What a check may use. Checks never print; they return findings. */
export interface CheckContext {
  contract: Contract;
  timeoutMs: number;
  runs: number;
  /** Time a slow check (e.g. filling the event history) may spend before it skips with the reason. */
  timeBudgetMs: number;
  /** Whether a token was configured (the token itself stays in the harness). */
  tokenConfigured: boolean;
  /**
   * A fresh connection; its transcript joins the current case's. Connections are one at a
   * time (a bridge may serve only one): opening one closes the others unless `alongside`.
   */
  connect(options?: { alongside?: boolean }): Promise<Connection>;
  /** A fresh connection, authorized when a token is configured (one at a time, as connect). */
  session(): Promise<Connection>;
  /** An auth request carrying the configured token. */
  authRequest(id?: unknown): object;
  /** Sends one request (object, text or bytes; a line feed is added to objects and text) and reads one reply, judging its envelope. */
  call(conn: Connection, request: object | string | Buffer, options?: CallOptions): Promise<Reply>;
  /** Judges a response line read raw (framing, UTF-8, envelope, id echo); throws a Violation. */
  judge(raw: Buffer, expectId: unknown): Response;
  /** Reads one reply, judging its envelope. */
  read(conn: Connection, options?: ReadOptions): Promise<Reply>;
  /** Runs a property over generated cases; shrinks the first failure. */
  property<T>(arbitrary: fc.Arbitrary<T>, judge: (input: T) => Promise<Finding>, options?: PropertyOptions<T>): Promise<Finding>;
  /** Whether the bridge answers ping on a fresh connection; restarts a bridge this tool owns when it does not. */
  alive(): Promise<boolean>;
}

/** Raised by the envelope judge: the reply broke a rule whatever the check was about. */
export class Violation extends Error {
  constructor(readonly rule: RuleId, message: string, readonly expected: string, readonly actual: string) { super(message); }
}

/** Raised when the harness cannot reach a verdict (e.g. the bridge wants a token none was given for). */
export class HarnessError extends Error {}

export const pass = (message: string): Finding => ({ verdict: "pass", message });
export const skip = (message: string): Finding => ({ verdict: "skip", message });
export const fail = (message: string, expected: string, actual: string, rules?: RuleId[]): Finding => ({ verdict: "fail", message, expected, actual, ...(rules ? { rules } : {}) });
export const warn = (message: string, expected: string, actual: string, rules?: RuleId[]): Finding => ({ verdict: "warn", message, expected, actual, ...(rules ? { rules } : {}) });

/** A short, human description of a reply, for "actual". */
export function describeReply(reply: Reply): string {
  switch (reply.kind) {
    case "response": return clip(reply.raw.toString("utf8"));
    case "closed": return reply.partial ? `connection closed after ${reply.partial} bytes of an unterminated line` : "connection closed";
    case "reset": return `connection reset (${reply.code})`;
    case "timeout": return reply.partial ? `no complete line within the timeout (${reply.partial} bytes without LF)` : "no response within the timeout";
    case "oversized": return `a response line over the limit (${reply.bytes} bytes without LF so far)`;
  }
}

export function errorCode(reply: Reply): number | undefined {
  return reply.kind === "response" ? reply.response.error?.code : undefined;
}

export function clip(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** A well-formed request object. */
export function rpc(method: string, params: Record<string, unknown> = {}, id: unknown = method): { jsonrpc: "2.0"; id: unknown; method: string; params: Record<string, unknown> } {
  return { jsonrpc: "2.0", id, method, params };
}

/** The result of a response reply, or undefined. */
export function resultOf(reply: Reply): Record<string, unknown> | undefined {
  if (reply.kind !== "response" || reply.response.error) return undefined;
  const r = reply.response.result;
  return typeof r === "object" && r !== null && !Array.isArray(r) ? (r as Record<string, unknown>) : undefined;
}

/** Sends `request` on a fresh session; passes when the reply is the error of rule `code`. */
export async function expectError(ctx: CheckContext, request: object, code: ErrorRuleId, what: string): Promise<Finding> {
  const reply = await ctx.call(await ctx.session(), request);
  const expected = ctx.contract.codes[code];
  if (errorCode(reply) === expected) return pass("rejected");
  return fail(`${what} was not rejected with ${expected}.`, String(expected), describeReply(reply));
}

/** A positive limit that status exposes (maxQueuedCommands, maxEvents), or the finding that it is missing. */
export async function statusLimit(ctx: CheckContext, conn: Connection, key: "maxQueuedCommands" | "maxEvents"): Promise<number | Finding> {
  const status = resultOf(await ctx.call(conn, rpc("status", {}, "status")));
  const limit = status?.[key];
  if (Number.isSafeInteger(limit) && (limit as number) > 0) return limit as number;
  return fail(`status gives no positive ${key}.`, `${key}: integer > 0`, JSON.stringify(status ?? null), ["integration.bounded-state"]);
}
