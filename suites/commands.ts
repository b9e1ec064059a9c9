import fc from "fast-check";
import { command, COMMAND_FIELDS, ILL_TYPED, isWellTyped, type Command } from "../generators/command.js";
import type { RuleId } from "../protocol/contract.js";
import type { Connection } from "../runner/connection.js";
import { sleep } from "../runner/connection.js";
import { describeReply, errorCode, fail, pass, resultOf, rpc, statusLimit, warn, type Check, type CheckContext, type Finding, type Reply } from "./check.js";
import { collectCompletions, latestSeq, type Completion } from "./events.js";

/** The command types the bridge advertises in observation.availableActions, so generated commands reach real handlers. */
async function advertisedTypes(ctx: CheckContext, conn: Connection): Promise<string[]> {
  const observation = resultOf(await ctx.call(conn, rpc("observe", {}, "actions")))?.observation as { availableActions?: unknown } | undefined;
  const actions = observation?.availableActions;
  return Array.isArray(actions) ? actions.filter((a): a is string => typeof a === "string" && a !== "") : [];
}

/** act, retrying while the queue is full (not this check's business). */
async function act(ctx: CheckContext, conn: Connection, cmd: Command, id: unknown): Promise<Reply> {
  for (let i = 0; ; i++) {
    const reply = await ctx.call(conn, rpc("act", cmd, id));
    if (errorCode(reply) !== ctx.contract.codes["error.queue-full"] || i >= 50) return reply;
    await sleep(20);
  }
}

/** One completion, well-formed: or why not. */
function judgeCompletion(list: Completion[] | undefined, commandSeq: number, cmd: Command, rules: RuleId[]): Finding | undefined {
  const shown = JSON.stringify(cmd);
  if (!list) return fail(`The accepted command ${shown} (commandSeq ${commandSeq}) never completed.`, "exactly one command_completed event with its commandSeq", "none within the wait", rules);
  if (list.length > 1) return fail(`The command ${shown} completed ${list.length} times.`, "exactly one command_completed event", JSON.stringify(list.map((c) => c.event)), ["integration.command-completion"]);
  const c = list[0]!;
  if (typeof c.success !== "boolean" || typeof c.message !== "string") {
    return fail(`The completion of ${shown} is not {commandSeq, success: boolean, message: string}.`, `{"type":"command_completed","commandSeq":${commandSeq},"success":<boolean>,"message":<string>}`, JSON.stringify(c.event), ["integration.command-completion"]);
  }
  return undefined;
}

export const actLifecycle: Check = {
  id: "method.act/accept-and-complete",
  rules: ["method.act", "integration.command-completion"],
  description: "Calls act with well-typed commands, their types drawn from observation.availableActions and at random, and waits for each one's completion event.",
  requirement: "Enqueue one project-defined command and return {accepted: true, commandSeq: integer}, commandSeq increasing; every accepted command eventually emits exactly one command_completed with commandSeq, success and message, including unsupported or failed actions.",
  async run(ctx) {
    const types = await advertisedTypes(ctx, await ctx.session());
    return ctx.property(command({ types }), async (cmd) => {
      const conn = await ctx.session();
      const cursor = await latestSeq(ctx, conn);
      // The command twice: the second commandSeq must be above the first (a restart between cases resets them).
      const seqs: number[] = [];
      for (const id of ["act-1", "act-2"]) {
        const reply = await act(ctx, conn, cmd, id);
        const r = resultOf(reply);
        if (r?.accepted !== true || !Number.isSafeInteger(r.commandSeq)) {
          return fail(`act ${JSON.stringify(cmd)} was not accepted as {accepted: true, commandSeq: integer}.`, `{"accepted":true,"commandSeq":<integer>}`, describeReply(reply), ["method.act"]);
        }
        const seq = r.commandSeq as number;
        if (seqs.length && seq <= seqs[0]!) return fail(`commandSeq went from ${seqs[0]} to ${seq}.`, "commandSeq strictly increasing", describeReply(reply), ["method.act"]);
        seqs.push(seq);
      }
      const done = await collectCompletions(ctx, conn, cursor, new Set(seqs));
      for (const seq of seqs) {
        const broken = judgeCompletion(done.get(seq), seq, cmd, ["integration.command-completion"]);
        if (broken) return broken;
      }
      return pass("completed");
    }, { restartAfterFailure: true });
  },
};

/** One check per optional field, so each field's rule gets a verdict of its own. */
export const fieldChecks: Check[] = COMMAND_FIELDS.map(({ field, rule, kind }) => ({
  id: `${rule}/typed`,
  rules: [rule, "integration.command-completion"],
  description: `Calls act with ${field} set to well- and ill-typed values (command types from observation.availableActions and at random), and follows each accepted command to its completion.`,
  requirement: `${field} is an optional ${kind === "identifier" ? "project identifier" : kind}. An ill-typed value is rejected with -32602 or accepted and completed, never accepted and then left silent; every accepted command emits command_completed.`,
  async run(ctx) {
    const types = await advertisedTypes(ctx, await ctx.session());
    const runs = Math.max(5, Math.ceil(ctx.runs / 4));
    // Every advertised type with every ill-typed value first: a handler that chokes on one is found for sure.
    const examples = types.flatMap((type) => ILL_TYPED[kind].map((value) => ({ type, [field]: value }) as Command)).slice(0, Math.ceil(ctx.runs / 2));
    return ctx.property(command({ types, illTyped: true, fields: [field], minFields: 1 }), async (cmd) => {
      const ill = !isWellTyped(kind, cmd[field]);
      const conn = await ctx.session();
      const cursor = await latestSeq(ctx, conn);
      const reply = await act(ctx, conn, cmd, "act");
      if (errorCode(reply) === ctx.contract.codes["error.invalid-params"]) {
        // Identifiers are project-defined, so rejecting one of those is the bridge's call.
        return ill || kind === "identifier" ? pass("rejected") : fail(`act rejected a well-typed ${field}: ${JSON.stringify(cmd)}.`, "accepted", describeReply(reply), [rule]);
      }
      const r = resultOf(reply);
      if (r?.accepted !== true || !Number.isSafeInteger(r.commandSeq)) {
        return fail(`act ${JSON.stringify(cmd)} got neither -32602 nor an acceptance.`, `-32602, or {"accepted":true,"commandSeq":<integer>}`, describeReply(reply), [rule]);
      }
      const seq = r.commandSeq as number;
      const done = await collectCompletions(ctx, conn, cursor, new Set([seq]));
      const broken = judgeCompletion(done.get(seq), seq, cmd, [rule, "integration.command-completion"]);
      if (broken) return broken;
      if (ill) return warn(`act accepted an ill-typed ${field} (it completed; the strict reading rejects it with -32602).`, "-32602", describeReply(reply), [rule]);
      return pass("completed");
    }, { runs, examples, restartAfterFailure: true });
  },
}));

export const queueFull: Check = {
  id: "error.queue-full/flood",
  rules: ["error.queue-full", "integration.bounded-state"],
  description: "Floods act on one connection (bounded in count and time) until -32002, then follows every accepted command to its completion and checks the bridge accepts again once drained.",
  requirement: "Reject act with -32002 when the bounded command queue has no capacity; full queues reject rather than overwrite or drop commands.",
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
      if (Number.isSafeInteger(seq)) { accepted.add(seq as number); continue; }
      if (errorCode(reply) === ctx.contract.codes["error.queue-full"]) { full = reply; break; }
      return fail("act during the flood got neither an acceptance nor -32002.", "accepted, or -32002 once the queue is full", describeReply(reply), ["error.queue-full"]);
    }
    const done = await collectCompletions(ctx, conn, cursor, accepted);
    const lost = [...accepted].filter((s) => !done.has(s));
    if (lost.length) {
      return fail(`${lost.length} of ${accepted.size} accepted commands never completed: the full queue dropped or overwrote them.`, "every accepted command completes; a full queue rejects new ones", `never completed: commandSeq ${lost.slice(0, 10).join(", ")}${lost.length > 10 ? ", …" : ""}`, ["integration.bounded-state", "error.queue-full"]);
    }
    if (!full) return warn(`The queue never filled: ${accepted.size} acts were all accepted (the bridge drains faster than the tool can fill it), so -32002 was not exercised.`, "-32002 once the queue is full", `${accepted.size} acceptances`, ["error.queue-full"]);
    const again = await act(ctx, conn, { type: "conformance.after-flood" }, "again");
    if (resultOf(again)?.accepted !== true) return fail("After the queue drained, act was still not accepted.", "accepted again once drained", describeReply(again), ["error.queue-full"]);
    return pass(`The queue filled after ${accepted.size} commands, rejected with -32002, completed all of them, and accepted again.`);
  },
};

export const commandChecks: Check[] = [actLifecycle, ...fieldChecks, queueFull];
