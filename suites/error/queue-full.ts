import { type Check, describeReply, errorCode, fail, pass, type Reply, resultOf, rpc, warn } from "../harness/check.js";
import { collectCompletions, latestSeq } from "../harness/events.js";
import { statusLimit } from "../harness/expect.js";
import { act } from "../harness/lifecycle.js";

export const queueFull: Check = {
  id: "error.queue-full/flood",
  rules: ["error.queue-full", "integration.bounded-state"],
  description:
    "Floods act on one connection (bounded in count and time) until -32002, then follows every accepted command to its completion and checks the bridge accepts again once drained.",
  async run(ctx) {
    const conn = await ctx.session();
    const capacity = await statusLimit(ctx, conn, "maxQueuedCommands");
    if (typeof capacity !== "number") return capacity;
    const cursor = await latestSeq(ctx, conn);
    const accepted = new Set<number>();
    let full: Reply | undefined;
    const attempts = capacity * 4 + 100;
    const stopAt = Date.now() + Math.min(ctx.timeBudgetMs, 10_000);
    for (let i = 0; i < attempts && Date.now() < stopAt; i++) {
      const reply = await ctx.call(conn, rpc("act", { type: "conformance.flood", intArg: i }, i));
      const seq = resultOf(reply)?.commandSeq;
      if (Number.isSafeInteger(seq)) {
        accepted.add(seq as number);
        continue;
      }
      if (errorCode(reply) === ctx.contract.codes["error.queue-full"]) {
        full = reply;
        break;
      }
      return fail(
        "act during the flood got neither an acceptance nor -32002.",
        "accepted, or -32002 once the queue is full",
        describeReply(reply),
        ["error.queue-full"],
      );
    }
    const done = await collectCompletions(ctx, conn, cursor, accepted);
    const lost = [...accepted].filter((s) => !done.has(s));
    if (lost.length) {
      return fail(
        `${lost.length} of ${accepted.size} accepted commands never completed: the full queue dropped or overwrote them.`,
        "every accepted command completes; a full queue rejects new ones",
        `never completed: commandSeq ${lost.slice(0, 10).join(", ")}${lost.length > 10 ? ", …" : ""}`,
        ["integration.bounded-state", "error.queue-full"],
      );
    }
    if (!full)
      return warn(
        `The queue never filled: ${accepted.size} acts were all accepted (the bridge drains faster than the tool can fill it), so -32002 was not exercised.`,
        "-32002 once the queue is full",
        `${accepted.size} acceptances`,
        ["error.queue-full"],
      );
    const again = await act(ctx, conn, { type: "conformance.after-flood" }, "again");
    if (resultOf(again)?.accepted !== true)
      return fail(
        "After the queue drained, act was still not accepted.",
        "accepted again once drained",
        describeReply(again),
        ["error.queue-full"],
      );
    return pass(
      `The queue filled after ${accepted.size} commands, rejected with -32002, completed all of them, and accepted again.`,
    );
  },
};

export const checks: Check[] = [queueFull];
