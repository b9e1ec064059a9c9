import { type Check, describeReply, fail, pass, resultOf, rpc } from "../harness/check.js";

/** Enough one after another that a bridge leaking a handler per connection runs out on its own, whatever ran before. */
const RECONNECTS = 8;

export const reconnects: Check = {
  id: "wire.sequential-connection/reconnect",
  rules: ["wire.sequential-connection", "wire.tcp-stream"],
  description: "Opens eight connections one after another (never two at once), each sending one ping and closing.",
  note: "a bridge serves the next connection once one ends",
  async run(ctx) {
    for (let i = 1; i <= RECONNECTS; i++) {
      const conn = await ctx.session();
      const reply = await ctx.call(conn, rpc("ping", {}, i));
      conn.close();
      if (resultOf(reply)?.ok !== true)
        return fail(`Connection ${i} of ${RECONNECTS} was not served.`, `{"result":{"ok":true}}`, describeReply(reply));
    }
    return pass(`${RECONNECTS} consecutive connections were each served.`);
  },
};

export const checks: Check[] = [reconnects];
