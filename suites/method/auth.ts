import { type Check, describeReply, errorCode, fail, pass, resultOf, rpc, skip } from "../harness/check.js";
import { NO_TOKEN } from "../harness/expect.js";

export const authWrongThenRight: Check = {
  id: "method.auth/wrong-then-right",
  rules: ["method.auth"],
  description: "On one connection: auth with a wrong token, ping, auth with the right token, ping.",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip(NO_TOKEN);
    const conn = await ctx.connect();
    const wrong = await ctx.call(conn, rpc("auth", { token: "not-the-token" }, 1));
    if (resultOf(wrong)?.authorized !== false)
      return fail(
        'A wrong token was not answered {"authorized":false}.',
        `{"result":{"authorized":false}}`,
        describeReply(wrong),
      );
    const still = await ctx.call(conn, rpc("ping", {}, 2));
    if (errorCode(still) !== ctx.contract.codes["error.unauthorized"])
      return fail(
        "After a wrong token the connection was not left unauthorized.",
        "-32001 for ping",
        describeReply(still),
        ["method.auth", "error.unauthorized"],
      );
    const right = await ctx.call(conn, ctx.authRequest(3));
    if (resultOf(right)?.authorized !== true)
      return fail(
        "The right token after a wrong one did not authorize the connection.",
        `{"result":{"authorized":true}}`,
        describeReply(right),
      );
    const pong = await ctx.call(conn, rpc("ping", {}, 4));
    if (resultOf(pong)?.ok !== true)
      return fail("After a successful auth, ping was not served.", `{"result":{"ok":true}}`, describeReply(pong));
    return pass("Wrong token refused, connection left unauthorized, right token then accepted.");
  },
};

export const authSimultaneous: Check = {
  id: "method.auth/per-connection",
  rules: ["method.auth", "error.unauthorized"],
  description:
    "Authorizes one connection and, while it stays open, calls ping on a second one; skipped if the bridge serves one connection at a time.",
  note: "a second connection is unauthorized while the first is authorized",
  async run(ctx) {
    if (!ctx.tokenConfigured)
      return skip(
        "no token configured (--token-env): the bridge does not require one, so authorization is not exercised",
      );
    const first = await ctx.session();
    const second = await ctx.connect({ alongside: true });
    const reply = await ctx.call(second, rpc("ping", {}, "second"), { timeoutMs: Math.min(ctx.timeoutMs, 1000) });
    first.close();
    if (reply.kind === "timeout")
      return skip(
        "The bridge serves one connection at a time (the second got no answer while the first was open), as the contract allows.",
      );
    if (errorCode(reply) === ctx.contract.codes["error.unauthorized"])
      return pass("The second connection was unauthorized while the first was authorized.");
    return fail(
      "A second connection was served without auth while another was authorized.",
      "-32001 on the second connection",
      describeReply(reply),
      ["error.unauthorized"],
    );
  },
};

export const checks: Check[] = [authWrongThenRight, authSimultaneous];
