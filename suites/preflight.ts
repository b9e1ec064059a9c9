import { errorCode, resultOf, rpc, type CheckContext } from "./check.js";

/**
 * Before any check: can the harness reach a verdict at all? Returns why not, or undefined.
 * A bridge that wants a token none was given for would fail every check for the wrong reason.
 */
export async function preflight(ctx: CheckContext): Promise<string | undefined> {
  const conn = await ctx.connect();
  if (ctx.tokenConfigured) {
    const auth = await ctx.call(conn, ctx.authRequest());
    if (resultOf(auth)?.authorized !== true) return "auth with the configured token was not accepted: check that --token-env names the variable holding the bridge's token";
    return undefined;
  }
  const ping = await ctx.call(conn, rpc("ping"));
  if (errorCode(ping) === ctx.contract.codes["error.unauthorized"]) {
    return "the bridge requires a token (ping answered -32001) but none is configured: export it and pass --token-env VAR (default FONLINE_AI_TOKEN)";
  }
  return undefined;
}
