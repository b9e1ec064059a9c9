import { type Check, type CheckContext, describeReply, errorCode, type Finding, fail, pass, type Reply, resultOf, rpc, skip, warn, violation, Fault } from "../harness/check.js";
import { expectError, expectPong, NO_TOKEN, rejectedOrClosed, statusLimit } from "../harness/expect.js";
import { collectCompletions, judgeEvents, latestSeq, readEvents, type Completion } from "../harness/events.js";
import { type Connection, sleep } from "../harness/connection.js";

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
      if (resultOf(reply)?.ok !== true) return fail(`Connection ${i} of 5 was not served.`, `{"result":{"ok":true}}`, describeReply(reply));
    }
    return pass("Five consecutive connections were each served.");
  },
};

export const checks: Check[] = [reconnects];
