// The plain form of a command, known before a check blames a field, an id type or a code on it: a plain
// command of the same type completes, and a plain bad command is rejected as invalid params. Where the
// plain form already fails, the finding fails the rule it broke and names it (Finding.rootCause).

import type { Command } from "../../generators/command.js";
import type { RuleId } from "../../protocol/contract.js";
import { type CheckContext, describeReply, errorCode, type Finding, fail, type Reply, resultOf, rpc } from "./check.js";
import type { Connection } from "./connection.js";
import { collectCompletions, latestSeq } from "./events.js";
import { ACCEPTED, judgedBy, seqAbove } from "./expect.js";
import { act, judgeCompletion } from "./lifecycle.js";

/** What a run learnt of plain forms: the types seen completing, and the code a plain bad command got. */
interface Known {
  completes: Set<string>;
  /** The rules a plain form broke so far, each the root cause a check found: with the context of that check. */
  broken: Map<string, CheckContext>;
  badCode?: number | undefined;
  badAsked?: boolean;
  /** Whether a connection that never authorized was served while another was authorized (asked once a run). */
  unauthorizedServed?: Promise<Finding | undefined>;
}

/** Kept with the run's ledger, so one run asks once per type (the check's own context outside a run). */
const known = new WeakMap<object, Known>();
const knownOf = (ctx: CheckContext): Known => {
  const key = ctx.ledger ?? ctx;
  let k = known.get(key);
  if (!k) known.set(key, (k = { completes: new Set(), broken: new Map() }));
  return k;
};

/** The finding's rule, named as the root cause: the check's own rules were not judged. */
const rooted = (ctx: CheckContext, rule: RuleId, plain: Record<string, unknown>, finding: Finding): Finding => {
  const { broken } = knownOf(ctx);
  if (!broken.has(rule)) broken.set(rule, ctx);
  return { ...finding, rules: [rule], rootCause: { rule, plain } };
};

/** Takes note that a command of this type completed: a plain one of it need not be tried. */
export const completed = (ctx: CheckContext, type: string): void => void knownOf(ctx).completes.add(type);

/**
 * Acts with the plain command `{type}` (once per type and run) and follows it to its completion: undefined
 * where it completes (or was refused: nothing to point at), else the failure on the rule it broke, its
 * root cause: integration.command-completion, or method.act where the acceptance is out of shape.
 */
export async function plainCompletes(ctx: CheckContext, conn: Connection, type: string): Promise<Finding | undefined> {
  const k = knownOf(ctx);
  if (k.completes.has(type)) return undefined;
  const plain: Command = { type };
  const cursor = await latestSeq(ctx, conn);
  const reply = await act(ctx, conn, plain, "plain");
  const r = resultOf(reply);
  const seq = r?.commandSeq;
  // Refused (a full queue, a type the project refuses): nothing to point at. Accepted out of shape: act's fault.
  if (reply.kind !== "response" || reply.response.error) return undefined;
  if (r?.accepted !== true || !Number.isSafeInteger(seq))
    return rooted(
      ctx,
      "method.act",
      plain,
      judgedBy(
        { kind: "result", expect: ACCEPTED, at: "plain" },
        fail(
          `act ${JSON.stringify(plain)} was answered with neither an error nor an acceptance.`,
          `{"accepted":true,"commandSeq":<integer>}`,
          describeReply(reply),
        ),
      ),
    );
  const done = await collectCompletions(ctx, conn, cursor, new Set([seq as number]));
  const rule = "integration.command-completion";
  const broken = judgeCompletion(done.get(seq as number), seq as number, plain, [rule]);
  if (!broken) {
    k.completes.add(type);
    return undefined;
  }
  return (
    (await seqRepeated(ctx, conn, plain, seq as number)) ??
    rooted(ctx, rule, plain, judgedBy({ kind: "completes", acts: ["plain"], after: "cursor" }, broken))
  );
}

/**
 * Where a command's completion was not found under its commandSeq `seq`: the plain command acted again. Answered
 * the same commandSeq, acceptances do not tell commands apart (method.act), and no completion can be matched.
 */
export async function seqRepeated(ctx: CheckContext, conn: Connection, plain: Command, seq: number) {
  const again = await act(ctx, conn, plain, "plain-again");
  if (resultOf(again)?.commandSeq !== seq) return undefined;
  return rooted(
    ctx,
    "method.act",
    plain,
    judgedBy(
      {
        kind: "result",
        expect: [seqAbove("plain")],
        at: "plain-again",
      },
      fail(
        `act ${JSON.stringify(plain)} twice in a row was answered commandSeq ${seq} both times.`,
        "a new commandSeq for every accepted command",
        describeReply(again),
      ),
    ),
  );
}

/** The plain bad command: act without a type, which every bridge rejects as invalid params. */
const PLAIN_BAD = {};

/**
 * Where a command was answered `code`, and a plain bad command (act without a type, asked once a run) is
 * answered the same code instead of invalid params: the failure on error.invalid-params, its root cause.
 */
export async function plainRejection(
  ctx: CheckContext,
  code: number | undefined,
  shown: string,
  /** An authorized connection to ask on; by default a fresh session. */
  conn?: Connection,
): Promise<Finding | undefined> {
  const invalid = ctx.contract.codes["error.invalid-params"];
  if (code === undefined || code === invalid) return undefined;
  const k = knownOf(ctx);
  let reply: Reply | undefined;
  if (!k.badAsked) {
    reply = await ctx.call(conn ?? (await ctx.session()), rpc("act", PLAIN_BAD, "plain-bad"));
    k.badCode = errorCode(reply);
    k.badAsked = true;
  }
  if (k.badCode !== code) return undefined;
  const rule = "error.invalid-params";
  return rooted(
    ctx,
    rule,
    PLAIN_BAD,
    // A reproducer judges the plain bad command where this case sent it, else the command itself.
    judgedBy(
      { kind: "error", codes: [invalid!], ...(reply ? { at: "plain-bad" } : {}) },
      fail(
        `${shown} was answered ${code}, as is a plain bad command (act without a type): the bridge answers ` +
          `invalid params with ${code}, not ${invalid}.`,
        String(invalid),
        `${code}`,
      ),
    ),
  );
}

/**
 * A failure on an accepted command that never completed (Finding.unfinished), asked of the plain command of its
 * type: where that does not complete either, the plain form is the cause. The first check to meet it fails the rule
 * the plain form broke; a check that meets it after another check found it could not judge its own input, and says
 * so (unjudged, naming the root cause), so the one fault is failed once, on its rule.
 */
export async function blamePlainForm(ctx: CheckContext, finding: Finding): Promise<Finding> {
  const type = finding.unfinished?.type;
  if (finding.verdict !== "fail" || typeof type !== "string") return finding;
  const foundBefore = new Set(knownOf(ctx).broken.keys());
  const cause = await plainCompletes(ctx, await ctx.session(), type);
  if (!cause?.rootCause) return finding;
  if (!foundBefore.has(cause.rootCause.rule)) return cause;
  const { rule, plain } = cause.rootCause;
  return {
    verdict: "error",
    message: `inconclusive: the plain command ${JSON.stringify(plain)} does not complete either (${rule}, the root cause another check found)`,
    reasonKind: "inconclusive",
    unjudged: { cause: "stopped" },
    // Counted with the root cause's rule alone: the check's own rules, judged by other checks, keep their verdicts.
    rules: [rule as RuleId],
    rootCause: cause.rootCause,
  };
}

/** The plain unauthorized request: ping on a connection that never sent auth. */
const PLAIN_UNAUTHORIZED = { method: "ping" };

/**
 * Where a connection that a refused auth should have left unauthorized was served: a connection that never sent
 * auth, opened while an authorized one stays open (after it closes, where the bridge serves one at a time), is asked
 * once a run. Served too: the failure on error.unauthorized, its root cause (authorization not kept per
 * connection); else undefined, and the refusal that authorized is auth's own fault.
 */
export function plainUnauthorized(ctx: CheckContext): Promise<Finding | undefined> {
  const k = knownOf(ctx);
  k.unauthorizedServed ??= askUnauthorized(ctx);
  return k.unauthorizedServed;
}

async function askUnauthorized(ctx: CheckContext): Promise<Finding | undefined> {
  const unauthorized = ctx.contract.codes["error.unauthorized"];
  const held = await ctx.session();
  const alongside = ctx.concurrentConnections !== false;
  if (!alongside) held.close();
  const conn = await ctx.connect({ alongside });
  const reply = await ctx.call(conn, rpc("ping", {}, "plain-unauthorized"));
  // Not answered: where auth on that same connection is, the connection was served and the rejection is missing;
  // where auth is not answered either (a second connection not served), there is nothing to point at.
  const silent = reply.kind !== "response" && (await ctx.call(conn, ctx.authRequest("plain-auth"))).kind === "response";
  held.close();
  conn.close();
  if (!silent && (reply.kind !== "response" || errorCode(reply) === unauthorized)) return undefined;
  return rooted(
    ctx,
    "error.unauthorized",
    PLAIN_UNAUTHORIZED,
    judgedBy(
      { kind: "error", codes: [unauthorized!] },
      fail(
        `ping on a connection that never sent auth, opened ${alongside ? "while" : "after"} another was authorized, ` +
          `was not rejected with ${unauthorized}: authorization is not kept per connection.`,
        String(unauthorized),
        describeReply(reply),
      ),
    ),
  );
}

/** The rule a bridge breaks that stops serving new connections (auth on one goes unanswered). */
export const UNSERVED_CONNECTION = "wire.sequential-connection";

/**
 * A check whose new connection was not served (its auth unanswered): the first to meet it fails
 * wire.sequential-connection, its root cause; one that meets it after another check found it could not judge its
 * own rules, and says so, naming the root cause.
 */
export function connectionUnserved(ctx: CheckContext, finding: Finding): Finding {
  const plain = { method: "auth" };
  // The check that found it meets it again in every case it shrinks to: still its own finding.
  const finder = knownOf(ctx).broken.get(UNSERVED_CONNECTION);
  if (finder === undefined || finder === ctx) return rooted(ctx, UNSERVED_CONNECTION, plain, finding);
  return {
    verdict: "error",
    message: `inconclusive: ${finding.message} (${UNSERVED_CONNECTION}, the root cause another check found)`,
    reasonKind: "inconclusive",
    unjudged: { cause: "stopped" },
    rules: [UNSERVED_CONNECTION],
    rootCause: { rule: UNSERVED_CONNECTION, plain },
  };
}
