import { type Check, describeReply, fail, pass, resultOf, rpc } from "../harness/check.js";

export const reconnects: Check = {
  id: "wire.sequential-connection/reconnect",
  rules: ["wire.sequential-connection", "wire.tcp-stream"],
  description: "Opens five connections one after another (never two at once), each sending one ping and closing.",
  note: "a bridge serves the next connection once one ends",
  async run(ctx) {
    for (let i = 1; i <= 5; i++) {
      const conn = await ctx.session();
      const reply = await ctx.call(conn, rpc("ping", {}, i));
      conn.close();
      if (resultOf(reply)?.ok !== true)
        return fail(`Connection ${i} of 5 was not served.`, `{"result":{"ok":true}}`, describeReply(reply));
    }
    return pass("Five consecutive connections were each served.");
  },
};

export const checks: Check[] = [reconnects];
