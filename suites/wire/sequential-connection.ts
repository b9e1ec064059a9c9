import type { Oracle } from "../../protocol/verdict.js";
import { type Check, describeReply, fail, findingOf, pass, resultOf, rpc } from "../harness/check.js";
import { judgedBy } from "../harness/expect.js";

/**
 * The rule holds for every next connection, and the bridge served others before this check (the
 * runner's own): a reproducer tries more in a row than the run made.
 */
const RECONNECTS: Oracle = { kind: "reconnects", count: 20 };

/** Enough one after another that a bridge leaking a handler per connection runs out on its own, whatever ran before. */
const IN_A_ROW = 8;

export const reconnects: Check = {
  id: "wire.sequential-connection/reconnect",
  rules: ["wire.sequential-connection", "wire.tcp-stream"],
  description: "Opens eight connections one after another (never two at once), each sending one ping and closing.",
  note: "a bridge serves the next connection once one ends",
  async run(ctx) {
    try {
      for (let i = 1; i <= IN_A_ROW; i++) {
        const conn = await ctx.session();
        const reply = await ctx.call(conn, rpc("ping", {}, i));
        conn.close();
        if (resultOf(reply)?.ok !== true)
          return judgedBy(
            RECONNECTS,
            fail(`Connection ${i} of ${IN_A_ROW} was not served.`, `{"result":{"ok":true}}`, describeReply(reply)),
          );
      }
    } catch (err) {
      // A connection whose auth went unanswered: the same fault, met one step earlier.
      return judgedBy(RECONNECTS, findingOf(err));
    }
    return pass(`${IN_A_ROW} consecutive connections were each served.`);
  },
};

export const checks: Check[] = [reconnects];
