// The command lifecycle as checks drive it: act (waiting out a full queue), follow each
// accepted command to its completion, and judge that completion.

import type { Command } from "../../generators/command.js";
import type { RuleId } from "../../protocol/contract.js";
import { type CheckContext, describeReply, errorCode, type Finding, fail, type Reply, resultOf, rpc } from "./check.js";
import type { Connection } from "./connection.js";
import { Backoff, type Completion, collectCompletions, latestSeq } from "./events.js";
import { ACCEPTED, judgedBy } from "./expect.js";

/**
 * The command types the bridge advertises in observation.availableActions, so generated commands
 * reach real handlers.
 */
export async function advertisedTypes(ctx: CheckContext, conn: Connection): Promise<string[]> {
  const observation = resultOf(await ctx.call(conn, rpc("observe", {}, "actions")))?.observation as
    | { availableActions?: unknown }
    | undefined;
  const actions = observation?.availableActions;
  return Array.isArray(actions) ? actions.filter((a): a is string => typeof a === "string" && a !== "") : [];
}

/**
 * act, retrying while the queue is full (not this check's business): polls at once, then backs
 * off, for up to twice the reply timeout, so a slow game loop gets to drain a one-command queue.
 */
export async function act(ctx: CheckContext, conn: Connection, cmd: Command, id: unknown): Promise<Reply> {
  const until = Date.now() + ctx.timeoutMs * 2;
  const pause = new Backoff();
  for (;;) {
    const reply = await ctx.call(conn, rpc("act", cmd, id));
    if (errorCode(reply) !== ctx.contract.codes["error.queue-full"] || Date.now() >= until) return reply;
    await pause.wait(until);
  }
}

/** One completion, well-formed: or why not. */
export function judgeCompletion(
  list: Completion[] | undefined,
  commandSeq: number,
  cmd: Command,
  rules: RuleId[],
): Finding | undefined {
  const shown = JSON.stringify(cmd);
  // Its completion may have left a small history unread (see Completions): nothing to judge.
  if (list?.every((c) => c.evicted)) return undefined;
  if (!list)
    return fail(
      `The accepted command ${shown} (commandSeq ${commandSeq}) never completed.`,
      "exactly one command_completed event with its commandSeq",
      "none within the wait",
      rules,
    );
  if (list.length > 1)
    return fail(
      `The command ${shown} completed ${list.length} times.`,
      "exactly one command_completed event",
      JSON.stringify(list.map((c) => c.event)),
      ["integration.command-completion"],
    );
  const c = list[0]!;
  // Found by its commandSeq's numeric value, so a numeric string is caught here: it is not an integer.
  if (!Number.isSafeInteger(c.commandSeq) || typeof c.success !== "boolean" || typeof c.message !== "string") {
    return fail(
      `The completion of ${shown} is not {commandSeq: integer, success: boolean, message: string}.`,
      `{"type":"command_completed","commandSeq":${commandSeq},"success":<boolean>,"message":<string>}`,
      JSON.stringify(c.event),
      ["integration.command-completion"],
    );
  }
  return undefined;
}

/**
 * Makes `count` events by acting and waiting for their completions; returns the cursor before them.
 * Acts in batches the history can hold (maxEvents from status), one command at a time when it
 * holds one, so every completion can be read before a later one drops it.
 */
export async function makeEvents(ctx: CheckContext, count: number): Promise<number | Finding> {
  const conn = await ctx.session();
  const maxEvents = resultOf(await ctx.call(conn, rpc("status", {}, "make-status")))?.maxEvents;
  const batch =
    Number.isSafeInteger(maxEvents) && (maxEvents as number) > 0 ? Math.min(count, maxEvents as number) : count;
  const before = await latestSeq(ctx, conn);
  let cursor = before;
  let made = 0;
  for (let i = 0; made < count; ) {
    const accepted = new Set<number>();
    const ids: string[] = [];
    while (accepted.size < Math.min(batch, count - made)) {
      const id = `make-${i++}`;
      const reply = await act(ctx, conn, { type: "conformance.noop" }, id);
      const seq = resultOf(reply)?.commandSeq;
      if (errorCode(reply) === ctx.contract.codes["error.queue-full"])
        // Asked again, as act did, the act is accepted once the queue drains.
        return judgedBy(
          { kind: "result", expect: ACCEPTED, until: ACCEPTED },
          fail(
            `The command queue stayed full for ${ctx.timeoutMs * 2} ms: queued commands are not completing.`,
            "a full queue drains as the bridge completes its commands",
            describeReply(reply),
            ["integration.command-completion"],
          ),
        );
      if (!Number.isSafeInteger(seq))
        return judgedBy(
          { kind: "result", expect: ACCEPTED },
          fail(
            "act was not accepted, so no events could be made.",
            `{"accepted":true,"commandSeq":<integer>}`,
            describeReply(reply),
            ["method.act"],
          ),
        );
      accepted.add(seq as number);
      ids.push(id);
    }
    const done = await collectCompletions(ctx, conn, cursor, accepted);
    const lost = [...accepted].filter((s) => !done.has(s));
    if (lost.length)
      return judgedBy(
        { kind: "completes", acts: ids, after: "cursor" },
        fail(
          "Accepted commands did not complete, so no events could be made.",
          "a command_completed event per accepted command",
          `${lost.length} of ${accepted.size} never completed (commandSeq ${lost.slice(0, 10).join(", ")})`,
          ["integration.command-completion"],
        ),
      );
    made += accepted.size;
    cursor = await latestSeq(ctx, conn);
  }
  conn.close();
  return before;
}
