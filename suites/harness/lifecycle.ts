// The command lifecycle as checks drive it: act (waiting out a full queue), follow each
// accepted command to its completion, and judge that completion.

import type { Command } from "../../generators/command.js";
import type { RuleId } from "../../protocol/contract.js";
import {
  type CheckContext,
  describeReply,
  errorCode,
  Fault,
  type Finding,
  fail,
  type Reply,
  resultOf,
  rpc,
} from "./check.js";
import type { Connection } from "./connection.js";
import { Backoff, type Completion, collectCompletions, latestSeq, UNREADABLE } from "./events.js";
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
    return {
      ...fail(
        `The accepted command ${shown} (commandSeq ${commandSeq}) never completed.`,
        "exactly one command_completed event with its commandSeq",
        "none within the wait",
        rules,
      ),
      unfinished: { ...cmd },
    };
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

/** The command the history is filled with: one no bridge runs as gameplay (an unknown type completes as a failure). */
const NOOP_COMMAND: Command = { type: "conformance.noop" };

/**
 * Makes `count` events by acting and waiting for their completions; returns the cursor before them.
 * Acts in batches the history can hold (maxEvents from status), one command at a time when it
 * holds one, so every completion can be read before a later one drops it.
 */
export async function makeEvents(ctx: CheckContext, count: number): Promise<number | Finding> {
  const conn = await ctx.session();
  const status = resultOf(await ctx.call(conn, rpc("status", {}, "make-status")));
  const maxEvents = status?.maxEvents;
  // A queue that had room at the start and is full once every command made here has completed
  // holds none of them: its slots are not freed.
  const roomAtStart =
    typeof status?.queuedCommands === "number" &&
    typeof status?.maxQueuedCommands === "number" &&
    status.queuedCommands < status.maxQueuedCommands;
  const batch =
    Number.isSafeInteger(maxEvents) && (maxEvents as number) > 0 ? Math.min(count, maxEvents as number) : count;
  const before = await latestSeq(ctx, conn);
  let cursor = before;
  let made = 0;
  for (let i = 0; made < count; ) {
    const accepted = new Set<number>();
    const ids: string[] = [];
    while (accepted.size < Math.min(batch, count - made)) {
      const latest = await latestSeq(ctx, conn);
      const id = `make-${i++}`;
      const reply = await act(ctx, conn, NOOP_COMMAND, id);
      const seq = resultOf(reply)?.commandSeq;
      if (!Number.isSafeInteger(seq)) {
        // Were the commands it holds ours, and have they all completed? Then its slots are not freed.
        const done = accepted.size ? await collectCompletions(ctx, conn, cursor, accepted) : undefined;
        const noneOutstanding = roomAtStart && [...accepted].every((s) => done?.has(s));
        // Asked again, as act did, the act is accepted once the queue drains.
        const waited = errorCode(reply) === ctx.contract.codes["error.queue-full"] ? { until: ACCEPTED } : {};
        return judgedBy(
          { kind: "result", expect: ACCEPTED, ...waited },
          await unaccepted(ctx, conn, reply, latest, noneOutstanding),
        );
      }
      accepted.add(seq as number);
      ids.push(id);
    }
    // Completions events will not show (a cursor read as something else) are judged as the ones
    // that never came: each accepted command completing once, read through events.
    const completes = { kind: "completes", acts: ids, after: "cursor" } as const;
    const done = await collectCompletions(ctx, conn, cursor, accepted).catch((err: unknown) => {
      if (!(err instanceof Fault && err.message.startsWith(UNREADABLE))) throw err;
      throw new Fault(err.kind, err.message, { ...err.detail, oracle: completes });
    });
    const lost = [...accepted].filter((s) => !done.has(s));
    if (lost.length)
      return judgedBy(
        { kind: "completes", acts: ids, after: "cursor" },
        await uncompleted(ctx, conn, NOOP_COMMAND, cursor, accepted.size, lost),
      );
    made += accepted.size;
    cursor = await latestSeq(ctx, conn);
  }
  conn.close();
  return before;
}

const queueOf = async (ctx: CheckContext, conn: Connection) => {
  const status = resultOf(await ctx.call(conn, rpc("status", {}, "queue-status")));
  return { queued: status?.queuedCommands, max: status?.maxQueuedCommands };
};

/**
 * Why act was not accepted, judged on the rule it breaks: a queue that stays full while commands
 * complete (its slots are not freed), a full queue answered with another code, a queue that
 * stays full with nothing completing (the game loop stopped), or a refusal on no ground at all.
 */
async function unaccepted(
  ctx: CheckContext,
  conn: Connection,
  reply: Reply,
  latestBefore: number,
  /** The queue had room when this began, and every command accepted since has completed. */
  noneOutstanding = false,
): Promise<Finding> {
  const queueFull = ctx.contract.codes["error.queue-full"];
  const code = errorCode(reply);
  const { queued, max } = await queueOf(ctx, conn);
  const full = typeof queued === "number" && typeof max === "number" && queued >= max;
  const moved = (await latestSeq(ctx, conn)) > latestBefore;
  // By the run's own account, too, no command accepted is still to complete.
  const settled = ctx.ledger !== undefined && ctx.ledger.accepted.size > 0 && ctx.ledger.outstanding === 0;
  if (code === queueFull && full && (noneOutstanding || settled))
    return fail(
      `The command queue is full (queuedCommands ${queued} of ${max}) although it had room before and every command accepted since has completed: its slots are not freed.`,
      "a queue whose commands completed has room again",
      describeReply(reply),
      ["error.queue-full"],
    );
  if (code === queueFull && moved)
    return fail(
      `The command queue stayed full (queuedCommands ${queued} of ${max}) for ${ctx.timeoutMs * 2} ms while commands completed: its slots are not freed.`,
      "a full queue drains as the bridge completes its commands",
      describeReply(reply),
      ["error.queue-full"],
    );
  if (code === queueFull)
    return fail(
      `The command queue stayed full for ${ctx.timeoutMs * 2} ms: queued commands are not completing.`,
      "a full queue drains as the bridge completes its commands",
      describeReply(reply),
      ["integration.command-completion"],
    );
  if (full && code !== undefined)
    return fail(
      `act on a full queue (queuedCommands ${queued} of ${max}) was answered ${code}, not ${queueFull}.`,
      `error ${queueFull}`,
      describeReply(reply),
      ["error.queue-full"],
    );
  return fail(
    "act was not accepted, so no events could be made.",
    `{"accepted":true,"commandSeq":<integer>}`,
    describeReply(reply),
    ["method.act"],
  );
}

/**
 * Accepted commands whose completions were not read: where they left the queue and the history
 * grew by at least as many events, they completed and events did not return them (the events
 * method's fault); otherwise they never completed.
 */
async function uncompleted(
  ctx: CheckContext,
  conn: Connection,
  cmd: Command,
  cursor: number,
  acted: number,
  lost: number[],
): Promise<Finding> {
  const shown = `${lost.length} of ${acted} commands ${JSON.stringify(cmd)} (commandSeq ${lost.slice(0, 10).join(", ")})`;
  const { queued } = await queueOf(ctx, conn);
  const latest = await latestSeq(ctx, conn);
  if (queued === 0 && latest - cursor >= acted)
    return fail(
      `Accepted commands completed (latestSeq went from ${cursor} to ${latest} and the queue emptied), but events after the cursor did not return their completions.`,
      "every command_completed event after the cursor, by its seq",
      `${shown} not returned by events`,
      ["method.events"],
    );
  return fail(
    `Accepted commands ${JSON.stringify(cmd)} did not complete, so no events could be made.`,
    "a command_completed event per accepted command",
    `${shown} never completed`,
    ["integration.command-completion"],
  );
}
