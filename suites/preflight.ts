import { describeReply, errorCode, resultOf, rpc, type CheckContext, type Reply } from "./check.js";

/** Why checks cannot reach a verdict, and which ones may still run (they can judge the fault itself). */
export interface Blocker { problem: string; stillRun: string[] }

const silent = (reply: Reply) => reply.kind === "timeout" || reply.kind === "closed" || reply.kind === "reset";

/**
 * Before any check: can the harness reach a verdict at all? A bridge that wants a token none
 * was given for, or that answers nothing, would fail every check for the wrong reason.
 */
export async function preflight(ctx: CheckContext): Promise<Blocker | undefined> {
  const conn = await ctx.connect();
  if (ctx.tokenConfigured) {
    const auth = await ctx.call(conn, ctx.authRequest());
    if (silent(auth)) return unresponsive("auth", auth);
    if (resultOf(auth)?.authorized !== true) return { problem: "auth with the configured token was not accepted: check that --token-env names the variable holding the bridge's token", stillRun: [] };
  }
  const ping = await ctx.call(conn, rpc("ping"));
  if (silent(ping)) return unresponsive("ping", ping);
  if (!ctx.tokenConfigured && errorCode(ping) === ctx.contract.codes["error.unauthorized"]) {
    return { problem: "the bridge requires a token (ping answered -32001) but none is configured: export it and pass --token-env VAR (default FONLINE_AI_TOKEN)", stillRun: [] };
  }
  return undefined;
}

function unresponsive(method: string, reply: Reply): Blocker {
  return { problem: `the bridge gave no answer to ${method} on a fresh connection (${describeReply(reply)}), so nothing else can be judged`, stillRun: ["method.ping/ok"] };
}
