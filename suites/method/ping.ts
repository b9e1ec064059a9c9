import { type Check, describeReply, fail, pass, resultOf, rpc } from "../harness/check.js";
import { judgedBy } from "../harness/expect.js";

export const pingOk: Check = {
  id: "method.ping/ok",
  rules: ["method.ping"],
  description: "Calls ping on an authorized connection.",
  async run(ctx) {
    const conn = await ctx.session();
    const reply = await ctx.call(conn, rpc("ping", {}, 1));
    if (resultOf(reply)?.ok === true) return pass('ping answered {"ok":true}.');
    return judgedBy(
      { kind: "result", equals: { ok: true } },
      fail('ping was not answered {"ok":true}.', `{"result":{"ok":true}}`, describeReply(reply)),
    );
  },
};

export const checks: Check[] = [pingOk];
