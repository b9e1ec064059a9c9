// The command lifecycle as checks drive it: act (waiting out a full queue), follow each
// accepted command to its completion, and judge that completion.

import type { Command } from "../../generators/command.js";
import type { RuleId } from "../../protocol/contract.js";
import { type CheckContext, describeReply, errorCode, type Finding, fail, type Reply, resultOf, rpc } from "./check.js";
import { type Connection, sleep } from "./connection.js";
import { type Completion, collectCompletions, latestSeq } from "./events.js";

/** The command types the bridge advertises in observation.availableActions, so generated commands reach real handlers. */
export async function advertisedTypes(ctx: CheckContext, conn: Connection): Promise<string[]> {
  const observation = resultOf(await ctx.call(conn, rpc("observe", {}, "actions")))?.observation as
    | { availableActions?: unknown }
    | undefined;
  const actions = observation?.availableActions;
  return Array.isArray(actions) ? actions.filter((a): a is string => typeof a === "string" && a !== "") : [];
}

/** act, retrying while the queue is full (not this check's business). */
export async function act(ctx: CheckContext, conn: Connection, cmd: Command, id: unknown): Promise<Reply> {
  for (let i = 0; ; i++) {
    const reply = await ctx.call(conn, rpc("act", cmd, id));
    if (errorCode(reply) !== ctx.contract.codes["error.queue-full"] || i >= 50) return reply;
    await sleep(20);
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
  if (typeof c.success !== "boolean" || typeof c.message !== "string") {
    return fail(
      `The completion of ${shown} is not {commandSeq, success: boolean, message: string}.`,
      `{"type":"command_completed","commandSeq":${commandSeq},"success":<boolean>,"message":<string>}`,
      JSON.stringify(c.event),
      ["integration.command-completion"],
    );
  }
  return undefined;
}

/** Makes `count` events by acting and waiting for their completions; returns the cursor before them. */
export async function makeEvents(ctx: CheckContext, count: number): Promise<number | Finding> {
  const conn = await ctx.session();
  const before = await latestSeq(ctx, conn);
  const accepted = new Set<number>();
  for (let i = 0; accepted.size < count && i < count * 50; i++) {
    const reply = await ctx.call(conn, rpc("act", { type: "conformance.noop" }, `make-${i}`));
    const seq = resultOf(reply)?.commandSeq;
    if (Number.isSafeInteger(seq)) accepted.add(seq as number);
    else if (errorCode(reply) === ctx.contract.codes["error.queue-full"]) await sleep(20);
    else
      return fail(
        "act was not accepted, so no events could be made.",
        `{"accepted":true,"commandSeq":<integer>}`,
        describeReply(reply),
        ["method.act"],
      );
  }
  const done = await collectCompletions(ctx, conn, before, accepted);
  if ([...accepted].some((s) => !done.has(s)))
    return fail(
      "Accepted commands did not complete, so no events could be made.",
      "a command_completed event per accepted command",
      `${[...accepted].filter((s) => !done.has(s)).length} of ${accepted.size} never completed`,
      ["integration.command-completion"],
    );
  conn.close();
  return before;
}
