import { type CheckContext, describeReply, errorCode, Fault, type Reply, resultOf, rpc } from "./check.js";
import { UNTERMINATED } from "./harness.js";

/** Why no check can reach a verdict; `faultJudges` lists the checks that judge the fault itself. */
export interface Blocked {
  kind: "unreachable" | "token-missing" | "token-rejected" | "silent" | "unframed";
  problem: string;
  faultJudges: string[];
}

const silent = (reply: Reply) => reply.kind === "timeout" || reply.kind === "closed" || reply.kind === "reset";

/**
 * Before any check: can the harness reach a verdict at all? A bridge that wants a token none
 * was given for, or that answers nothing, would fail every check for the wrong reason.
 */
export async function preflight(ctx: CheckContext, tokenEnv: string): Promise<Blocked | undefined> {
  try {
    return await probe(ctx, tokenEnv);
  } catch (err) {
    if (!(err instanceof Fault)) throw err;
    // A malformed reply is a fault the checks themselves judge; no connection at all is not.
    if (err.kind === "target-lost") return { kind: "unreachable", problem: err.message, faultJudges: [] };
    // Replies never ended by LF cannot be read by any check: the one that pings judges the framing.
    if (err.kind === "violation" && err.message.startsWith(UNTERMINATED))
      return {
        kind: "unframed",
        problem: `the bridge's replies never end with LF (${err.detail.actual}), so nothing else can be judged`,
        faultJudges: ["wire.ndjson/sequence-in-order"],
      };
    return undefined;
  }
}

async function probe(ctx: CheckContext, tokenEnv: string): Promise<Blocked | undefined> {
  const conn = await ctx.connect();
  if (ctx.tokenConfigured) {
    const auth = await ctx.call(conn, ctx.authRequest());
    if (silent(auth)) return unresponsive("auth", auth);
    if (resultOf(auth)?.authorized !== true) {
      return {
        kind: "token-rejected",
        problem: `auth with the token in ${tokenEnv} was not accepted: check that it holds the bridge's token`,
        faultJudges: [],
      };
    }
  }
  const ping = await ctx.call(conn, rpc("ping"));
  if (silent(ping)) return unresponsive("ping", ping);
  if (!ctx.tokenConfigured && errorCode(ping) === ctx.contract.codes["error.unauthorized"]) {
    return {
      kind: "token-missing",
      problem: `the bridge requires a token (ping answered ${errorCode(ping)}) but ${tokenEnv} is not set: export the token in ${tokenEnv}, or name another variable with --token-env`,
      faultJudges: [],
    };
  }
  return undefined;
}

function unresponsive(method: string, reply: Reply): Blocked {
  return {
    kind: "silent",
    problem: `the bridge gave no answer to ${method} on a fresh connection (${describeReply(reply)}), so nothing else can be judged`,
    faultJudges: ["method.ping/ok"],
  };
}

/**
 * Whether the bridge serves a second connection while a first stays open (the contract lets a
 * bridge serve one at a time). The second connection's request gets a few round trips' time;
 * unanswered, the first is closed: an answer that follows at once proves a one-at-a-time bridge
 * without waiting out a whole timeout.
 */
export async function servesConcurrently(ctx: CheckContext): Promise<boolean> {
  const first = await ctx.session();
  const started = Date.now();
  const pong = await ctx.call(first, rpc("ping", {}, "first"));
  if (pong.kind !== "response") return false;
  const grace = Math.min(ctx.timeoutMs, Math.max(50, (Date.now() - started) * 20));
  const second = await ctx.connect({ alongside: true });
  const request = ctx.tokenConfigured ? ctx.authRequest("second") : rpc("ping", {}, "second");
  const reply = await ctx.call(second, request, { timeoutMs: grace });
  first.close();
  second.close();
  return reply.kind === "response";
}
