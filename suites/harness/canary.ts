// The canary, run before the first check and after a check failed: does the bridge still
// answer, and does it still complete commands? It finds out what stopped before anything is
// called inconclusive: a queue that is only full, a queue that stays full while commands
// complete, a full queue answered with the wrong code, one command type that never completes,
// completions that happen but that events cannot show, or a game loop that completes nothing.
import type { RuleId } from "../../protocol/contract.js";
import { type CheckContext, describeReply, errorCode, Fault, type Finding, fail, resultOf, rpc } from "./check.js";
import type { Connection } from "./connection.js";
import { Backoff, collectCompletions, latestSeq } from "./events.js";
import { advertisedTypes } from "./lifecycle.js";

export interface Health {
  /** Answers ping on a fresh, authorized connection. */
  replies: boolean;
  /** Accepts a command and completes it within the wait. */
  completions: boolean;
  /** What the canary saw, for the report. */
  detail: string;
  /** A fault the canary met on its own rule while finding out (judged there, once). */
  finding?: Finding;
  /** The command type that completed: the one to act with next time. */
  goodType?: string;
}

/** What the canary remembers between its runs in one run of the suite. */
export interface CanaryMemory {
  /** An advertised type that has completed before in this run. */
  goodType?: string;
}

/** Before the first check, the bridge completed no command: broken before the run began, on the rule of completion. */
export const completedNothing = (detail: string): Finding => ({
  verdict: "fail",
  message: `No command completed before the first check: ${detail}. The bridge was broken before this run began.`,
  expected: "an accepted command completes with one command_completed event",
  actual: detail,
  rules: ["integration.command-completion"],
});

export async function canary(ctx: CheckContext, memory: CanaryMemory = {}): Promise<Health> {
  try {
    return await probe(ctx, memory);
  } catch (err) {
    // A reply that breaks a rule (an unsolicited line, a wrong id) is still a reply: the bridge
    // serves, badly, and each later check judges what it gets instead of being written off.
    if (err instanceof Fault && err.kind === "violation")
      return { replies: true, completions: true, detail: `answers, but: ${err.message}` };
    throw err;
  }
}

interface Status {
  queued?: number;
  max?: number;
}

async function status(ctx: CheckContext, conn: Connection): Promise<Status> {
  const r = resultOf(await ctx.call(conn, rpc("status", {}, "canary-status")));
  const int = (v: unknown) => (Number.isSafeInteger(v) ? (v as number) : undefined);
  return { queued: int(r?.queuedCommands), max: int(r?.maxQueuedCommands) };
}

/**
 * Lets the queue drain: follows status.queuedCommands while it keeps going down (each step
 * within twice the reply timeout), so a slow game loop is not taken for a dead one.
 */
async function drain(ctx: CheckContext, conn: Connection, cursor: number): Promise<{ left: Status; moved: boolean }> {
  let now = await status(ctx, conn);
  const pause = new Backoff(64);
  let until = Date.now() + ctx.timeoutMs * 2;
  let lowest = now.queued ?? 0;
  while ((now.queued ?? 0) > 0 && Date.now() < until) {
    await pause.wait(until);
    now = await status(ctx, conn);
    if ((now.queued ?? 0) < lowest) {
      lowest = now.queued ?? 0;
      until = Date.now() + ctx.timeoutMs * 2;
    }
  }
  // Did anything complete meanwhile? The events stream moved on past the cursor.
  return { left: now, moved: (await latestSeq(ctx, conn)) > cursor };
}

const diagnosis = (rule: RuleId, message: string, expected: string, actual: string): Finding =>
  fail(message, expected, actual, [rule]);

async function probe(ctx: CheckContext, memory: CanaryMemory): Promise<Health> {
  const conn = await ctx.session();
  const pong = await ctx.call(conn, rpc("ping", {}, "canary-ping"));
  // Any response is an answer: what it says is method.ping's business, not a reason to stop.
  if (pong.kind !== "response") {
    return { replies: false, completions: false, detail: `ping on a fresh connection: ${describeReply(pong)}` };
  }
  // Act only with a type the bridge advertises, and the one that completed before where there is one:
  // a type the bridge never completes is that type's fault, not a dead game loop.
  const advertised = memory.goodType === undefined ? await advertisedTypes(ctx, conn) : [];
  const type = memory.goodType ?? advertised[0] ?? "conformance.canary";
  const before = await latestSeq(ctx, conn);
  const { left, moved } = await drain(ctx, conn, before);
  const full = left.max !== undefined && left.queued !== undefined && left.queued >= left.max;
  let finding: Finding | undefined;
  // By the run's own account every command accepted has completed, yet the queue is full.
  const leaking = full && !moved && ctx.ledger !== undefined && ctx.ledger.accepted.size > 0 && !ctx.ledger.outstanding;
  if (leaking) {
    finding = diagnosis(
      "error.queue-full",
      `The queue stays full (queuedCommands ${left.queued} of ${left.max}) although every one of the ${ctx.ledger!.accepted.size} commands accepted in this run has completed: its slots are not freed.`,
      "queuedCommands falls as queued commands complete",
      `queuedCommands ${left.queued} with no accepted command outstanding`,
    );
  } else if (full && moved) {
    finding = diagnosis(
      "error.queue-full",
      `The queue stays full (queuedCommands ${left.queued} of ${left.max}) although commands complete: its slots are not freed.`,
      "queuedCommands falls as queued commands complete",
      `queuedCommands ${left.queued} after the game loop completed commands`,
    );
  }
  const cursor = await latestSeq(ctx, conn);
  let reply = await ctx.call(conn, rpc("act", { type }, "canary-act"));
  const code = errorCode(reply);
  const queueFull = ctx.contract.codes["error.queue-full"];
  if (full && code !== undefined && code !== queueFull) {
    finding ??= diagnosis(
      "error.queue-full",
      `act on a full queue (queuedCommands ${left.queued} of ${left.max}) was answered ${code}, not ${queueFull}.`,
      `error ${queueFull}`,
      describeReply(reply),
    );
  }
  const seq = resultOf(reply)?.commandSeq;
  if (!Number.isSafeInteger(seq)) {
    // Only a queue that stays full, with nothing completing, shows a stopped game loop. Any other
    // answer (an error, a malformed acceptance) is for the checks to judge, not a reason to stop.
    const stalled = full && !moved && code === queueFull;
    return {
      replies: true,
      completions: !stalled,
      detail: stalled
        ? `the queue stays full (queuedCommands ${left.queued} of ${left.max}) and nothing completes${leaking ? ", though every command accepted has completed: its slots are not freed" : ""}`
        : `act answered ${describeReply(reply)}`,
      ...(finding ? { finding } : {}),
    };
  }
  const done = await collectCompletions(ctx, conn, cursor, new Set([seq as number]));
  if (done.has(seq as number)) {
    await learnPace(ctx, conn, type);
    return { replies: true, completions: true, detail: "serving", goodType: type, ...(finding ? { finding } : {}) };
  }
  // Not seen through events: did it complete all the same (it left the queue, an event was recorded)?
  const after = await status(ctx, conn);
  const latest = await latestSeq(ctx, conn);
  reply = await ctx.call(
    conn,
    rpc("events", { afterSeq: cursor, limit: ctx.contract.limits.eventsLimitMax }, "canary-events"),
  );
  // With the queue empty before it, its completion recorded under another commandSeq: act answered a number that is
  // not the command's.
  const under = ((resultOf(reply)?.events ?? []) as { event?: { type?: unknown; commandSeq?: unknown } }[])
    .map((e) => e.event)
    .find((e) => e?.type === "command_completed" && e.commandSeq !== seq);
  if (under && left.queued === 0)
    finding ??= diagnosis(
      "method.act",
      `act answered commandSeq ${seq}, but the only command acted completed as commandSeq ${JSON.stringify(under.commandSeq)}.`,
      `commandSeq ${seq} in the command_completed event`,
      describeReply(reply),
    );
  if (latest > cursor && (after.queued ?? 0) === 0) {
    finding ??= diagnosis(
      "method.events",
      `Commands complete (latestSeq went from ${cursor} to ${latest} and the queue emptied), but events after ${cursor} did not return the completion of commandSeq ${seq}.`,
      `the command_completed event of commandSeq ${seq} after seq ${cursor}`,
      describeReply(reply),
    );
    return {
      replies: true,
      completions: true,
      detail: "completes, but events does not show it",
      finding,
      goodType: type,
    };
  }
  return {
    replies: true,
    completions: false,
    detail: `the accepted command ${JSON.stringify({ type })} (commandSeq ${seq}) did not complete`,
    ...(finding ? { finding } : {}),
  };
}

/** Most commands acted to learn the pace: each completion awaited is one step of the game loop seen. */
const PACE_ACTS = 4;

/**
 * Until the run knows the game loop's pace (before the first check), the same command again, each
 * acted once the one before has completed, so each waits a whole step of the loop: from the first
 * check on, a completion is waited for as long as this loop needs, not twice the reply timeout.
 * One not accepted or not completed ends it: judging that is the checks' business.
 */
async function learnPace(ctx: CheckContext, conn: Connection, type: string): Promise<void> {
  for (let i = 0; ctx.ledger && !ctx.ledger.paced && i < PACE_ACTS; i++) {
    const cursor = await latestSeq(ctx, conn);
    const seq = resultOf(await ctx.call(conn, rpc("act", { type }, "canary-pace")))?.commandSeq;
    if (!Number.isSafeInteger(seq)) return;
    const done = await collectCompletions(ctx, conn, cursor, new Set([seq as number]));
    if (!done.has(seq as number)) return;
  }
}
