import { type Check, type CheckContext, describeReply, errorCode, type Finding, fail, pass, type Reply, resultOf, rpc, skip, warn, violation, Fault } from "../harness/check.js";
import { expectError, expectPong, NO_TOKEN, rejectedOrClosed, statusLimit } from "../harness/expect.js";
import { collectCompletions, judgeEvents, latestSeq, readEvents, type Completion } from "../harness/events.js";
import { type Connection, sleep } from "../harness/connection.js";

export const pingOk: Check = {
  id: "method.ping/ok",
  rules: ["method.ping"],
  description: "Calls ping on an authorized connection.",
  async run(ctx) {
    const conn = await ctx.session();
    const reply = await ctx.call(conn, rpc("ping", {}, 1));
    if (resultOf(reply)?.ok === true) return pass("ping answered {\"ok\":true}.");
    return fail("ping was not answered {\"ok\":true}.", `{"result":{"ok":true}}`, describeReply(reply));
  },
};

export const checks: Check[] = [pingOk];
