// The expectations checks share: a small vocabulary instead of hand-built comparisons.
import type { RuleId } from "../../protocol/contract.js";
import type { Assertion, Oracle } from "../../protocol/verdict.js";
import {
  type CheckContext,
  describeReply,
  errorCode,
  type Finding,
  fail,
  pass,
  type Reply,
  resultOf,
  rpc,
} from "./check.js";
import type { Connection } from "./connection.js";

/** Sends `request` on a fresh session; passes when the reply is the error of rule `errorRule`. */
export async function expectError(
  ctx: CheckContext,
  request: object,
  errorRule: RuleId,
  what: string,
): Promise<Finding> {
  const reply = await ctx.call(await ctx.session(), request);
  const expected = ctx.contract.codes[errorRule];
  if (errorCode(reply) === expected) return pass("rejected");
  return judgedBy(
    { kind: "error", codes: expected === undefined ? [] : [expected] },
    fail(`${what} was not rejected with ${expected}.`, String(expected), describeReply(reply)),
  );
}

/** A ping must come back as {ok:true}; anything else fails `rule`. */
export function expectPong(reply: Reply, what: string, rule: RuleId): Finding {
  if (resultOf(reply)?.ok === true) return pass(`${what}: answered.`);
  return judgedBy(
    { kind: "result", equals: { ok: true } },
    fail(`${what}: the ping was not answered with {"ok":true}.`, `{"result":{"ok":true}}`, describeReply(reply), [
      rule,
    ]),
  );
}

/** The outcomes the contract allows for input that must be rejected with `code` or a close. */
export function rejectedOrClosed(reply: Reply, code: number | undefined): boolean {
  return errorCode(reply) === code || reply.kind === "closed" || reply.kind === "reset";
}

/** What rejectedOrClosed allows, as an oracle: the error `code`, or the connection closed. */
export const rejectedOrClosedOracle = (code: number | undefined): Oracle => ({
  kind: "error",
  codes: code === undefined ? [] : [code],
  orClose: true,
});

/** A failure that `oracle` judged (other verdicts pass through): a reproducer outside this tool applies it. */
export function judgedBy(oracle: Oracle, finding: Finding): Finding {
  return finding.verdict === "fail" ? { ...finding, oracle } : finding;
}

/** A positive limit that status advertises (maxQueuedCommands, maxEvents), or the finding that it is missing. */
export async function statusLimit(
  ctx: CheckContext,
  conn: Connection,
  key: "maxQueuedCommands" | "maxEvents",
): Promise<number | Finding> {
  const status = resultOf(await ctx.call(conn, rpc("status", {}, "status")));
  const limit = status?.[key];
  if (Number.isSafeInteger(limit) && (limit as number) > 0) return limit as number;
  return judgedBy(
    { kind: "result", positiveIntegers: [key] },
    fail(`status gives no positive ${key}.`, `${key}: integer > 0`, JSON.stringify(status ?? null), [
      "integration.bounded-state",
    ]),
  );
}

/** An act reply that accepted the command: {accepted: true, commandSeq: integer}. */
export const ACCEPTED: Assertion[] = [
  { path: ["result", "accepted"], equals: true },
  { path: ["result", "commandSeq"], is: "integer" },
];

/** An act reply whose commandSeq is above the one in the reply to the earlier act `earlier`. */
export const seqAbove = (earlier: unknown): Assertion => ({
  path: ["result", "commandSeq"],
  op: ">",
  than: { ref: earlier, path: ["result", "commandSeq"] },
});

/** Why authorization checks skip against a bridge run without a token. */
export const NO_TOKEN =
  "no token configured (--token-env): the bridge does not require one, so authorization is not exercised";
