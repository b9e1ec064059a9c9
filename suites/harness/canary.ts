// A cheap canary, run after a check failed: does the bridge still answer, and does it still
// complete commands? It tells a bridge an earlier input broke from a fault in the next rule.
import { type CheckContext, describeReply, Fault, resultOf, rpc } from "./check.js";
import { collectCompletions, latestSeq } from "./events.js";

export interface Health {
  /** Answers ping on a fresh, authorized connection. */
  replies: boolean;
  /** Accepts a command and completes it within the wait. */
  completions: boolean;
  /** What the canary saw, for the report. */
  detail: string;
}

export async function canary(ctx: CheckContext): Promise<Health> {
  try {
    return await probe(ctx);
  } catch (err) {
    // A reply that breaks a rule (an unsolicited line, a wrong id) is still a reply: the bridge
    // serves, badly, and each later check judges what it gets instead of being written off.
    if (err instanceof Fault && err.kind === "violation")
      return { replies: true, completions: true, detail: `answers, but: ${err.message}` };
    throw err;
  }
}

async function probe(ctx: CheckContext): Promise<Health> {
  const conn = await ctx.session();
  const pong = await ctx.call(conn, rpc("ping", {}, "canary-ping"));
  if (resultOf(pong)?.ok !== true) {
    return { replies: false, completions: false, detail: `ping on a fresh connection: ${describeReply(pong)}` };
  }
  const cursor = await latestSeq(ctx, conn);
  const reply = await ctx.call(conn, rpc("act", { type: "conformance.canary" }, "canary-act"));
  const seq = resultOf(reply)?.commandSeq;
  if (!Number.isSafeInteger(seq)) {
    return { replies: true, completions: false, detail: `act was not accepted: ${describeReply(reply)}` };
  }
  const done = await collectCompletions(ctx, conn, cursor, new Set([seq as number]));
  if (!done.has(seq as number)) {
    return { replies: true, completions: false, detail: `the accepted command ${seq} did not complete` };
  }
  return { replies: true, completions: true, detail: "serving" };
}
