import { type Command, command, type FieldKind, ILL_TYPED, isWellTyped } from "../../generators/command.js";
import { contract } from "../../protocol/contract.js";
import type { Oracle } from "../../protocol/verdict.js";
import {
  type Check,
  type CheckContext,
  describeReply,
  errorCode,
  type Finding,
  fail,
  pass,
  resultOf,
  rpc,
} from "../harness/check.js";
import { classesFirst, cover } from "../harness/classes.js";
import type { Connection } from "../harness/connection.js";
import { collectCompletions, latestSeq } from "../harness/events.js";
import { ACCEPTED, judgedBy } from "../harness/expect.js";
import { act, advertisedTypes, judgeCompletion } from "../harness/lifecycle.js";
import { completed, plainCompletes, plainRejection, seqRepeated } from "../harness/plain.js";

type CommandField = (typeof contract.commandFields)[number];

/** Well-typed values a handler may still trip on: an identifier is any string, the empty one included, or integer. */
const EDGES: Partial<Record<FieldKind, unknown[]>> = { identifier: ["", 0, -1] };

/** One check per optional field, so each field's rule gets a verdict of its own. */
export const fieldChecks: Check[] = contract.commandFields.map(({ field, rule, kind }) => ({
  id: `${rule}/typed`,
  rules: [rule, "integration.command-completion"],
  needs: ["completions"],
  description:
    `Calls act with ${field} set to each ill-typed value with each command type of observation.availableActions ` +
    `(both in full, or each at least once where the product is large), then to well- and ill-typed values at ` +
    "random, and follows each accepted command to its completion.",
  note:
    "an ill-typed value is rejected as invalid params, or accepted and completed; never accepted and then left " +
    "silent. An identifier is any string, the empty one included, or integer: rejecting one is the project's call",
  async run(ctx) {
    const types = await advertisedTypes(ctx, await ctx.session());
    // Every advertised type with every ill-typed value first (each class of both at least once where the product is
    // large), whatever the run count: a handler that chokes on one is found for sure. Random commands follow.
    const pool = types.length ? types : ["conformance.probe"];
    const classes = [
      ...cover(pool, ILL_TYPED[kind]).map(([type, value]) => ({ type, [field]: value }) as Command),
      // Well-typed values at the edge of what a project may take: accepted, they complete like any other.
      ...(EDGES[kind] ?? []).map((value, i) => ({ type: pool[i % pool.length]!, [field]: value }) as Command),
    ];
    return ctx.property(
      command({ types, illTyped: true, fields: [field], minFields: 1 }),
      (cmd) => judgeField(ctx, { field, rule, kind }, pool, cmd),
      {
        // The edges are accepted and followed to completion as random commands are: they stand in for some of them.
        ...classesFirst(classes, Math.max(2, Math.max(5, Math.ceil(ctx.runs / 4)) - (EDGES[kind]?.length ?? 0))),
        restartAfterFailure: true,
        sharedBy: contract.commandFields.length,
        settle: (cases) => settleTogether(ctx, { field, rule, kind }, pool, cases),
      },
    );
  },
}));

/**
 * One act with the field set: rejected as invalid params (only an ill-typed value or an identifier), or accepted
 * and followed to exactly one completion, the game loop going on after it.
 */
async function judgeField(
  ctx: CheckContext,
  { field, rule, kind }: CommandField,
  pool: string[],
  cmd: Command,
): Promise<Finding> {
  const ill = !isWellTyped(kind, cmd[field]);
  const conn = await ctx.session();
  // The field is judged only on a type whose plain command completes.
  const plainFails = await plainCompletes(ctx, conn, cmd.type);
  if (plainFails) return plainFails;
  const cursor = await latestSeq(ctx, conn);
  const reply = await act(ctx, conn, cmd, "act");
  const invalid = ctx.contract.codes["error.invalid-params"];
  if (errorCode(reply) === invalid) {
    // Identifiers are project-defined, so rejecting one of those is the bridge's call.
    return ill || kind === "identifier"
      ? pass("rejected")
      : judgedBy(
          { kind: "result", expect: ACCEPTED },
          fail(`act rejected a well-typed ${field}: ${JSON.stringify(cmd)}.`, "accepted", describeReply(reply), [rule]),
        );
  }
  const r = resultOf(reply);
  const rejectable = ill || kind === "identifier" ? [invalid!] : [];
  if (r?.accepted !== true || !Number.isSafeInteger(r.commandSeq)) {
    // Rejected as a plain bad command is: the code is the bridge's fault, not the field's.
    const code = rejectable.length
      ? await plainRejection(ctx, errorCode(reply), `act ${JSON.stringify(cmd)}`, conn)
      : undefined;
    if (code) return code;
    return judgedBy(
      { kind: "completes", acts: ["act"], after: "cursor", orCodes: rejectable },
      fail(
        `act ${JSON.stringify(cmd)} got neither ${invalid} nor an acceptance.`,
        `${invalid}, or {"accepted":true,"commandSeq":<integer>}`,
        describeReply(reply),
        [rule],
      ),
    );
  }
  const seq = r.commandSeq as number;
  // The look for a second completion lasts one step of the game loop, marked by a plain command.
  const plain: Command = { type: pool[0]! };
  let marker: number | undefined;
  const step = async () => {
    const marked = resultOf(await act(ctx, conn, plain, "step"));
    if (marked?.accepted === true && Number.isSafeInteger(marked.commandSeq)) marker = marked.commandSeq as number;
    return marker;
  };
  const done = await collectCompletions(ctx, conn, cursor, new Set([seq]), { step });
  const completes = (acts: string[]): Oracle => ({
    kind: "completes",
    acts,
    after: "cursor",
    orCodes: rejectable,
    step: plain,
  });
  const broken = judgeCompletion(done.get(seq), seq, cmd, [rule, "integration.command-completion"]);
  if (broken)
    return (broken.unfinished && (await seqRepeated(ctx, conn, plain, seq))) || judgedBy(completes(["act"]), broken);
  completed(ctx, cmd.type);
  if (marker !== undefined && !done.has(marker)) {
    return judgedBy(
      completes(["act", "step"]),
      fail(
        `After ${JSON.stringify(cmd)} completed, the plain command ${JSON.stringify(plain)} acted next ` +
          `(commandSeq ${marker}) never completed: the game loop stopped after it.`,
        "exactly one command_completed event with its commandSeq",
        "none within the wait",
        ["integration.command-completion"],
      ),
    );
  }
  // The contract asks only that an accepted command completes: a project may read an ill-typed value its way.
  return pass(ill ? "accepted and completed" : "completed");
}

/** A settle follows a chunk this many steps of the loop's pace past its last completion, and at least this long. */
const SETTLE_STEPS = 5;
const SETTLE_FLOOR_MS = 50;

/** A number the bridge reported, or 0. */
const count = (value: unknown): number => (Number.isSafeInteger(value) ? (value as number) : 0);

/**
 * The class cases judged together, in chunks the queue and the history hold whole: a chunk's commands acted at once,
 * then followed to their completions and one marked step of the game loop after them, so they share the loop's turns
 * instead of two turns each. Returns how many cases, from the first, passed as judgeField passes one alone; undefined
 * where the bridge holds too few for two. The first case that does not stops it: that case and those after it run
 * alone, so a command that stopped the loop is named as it is when judged alone.
 */
async function settleTogether(
  ctx: CheckContext,
  spec: CommandField,
  pool: string[],
  cases: Command[],
): Promise<number | undefined> {
  const conn = await ctx.session();
  const status = resultOf(await ctx.call(conn, rpc("status", {}, "room")));
  // Room for a chunk and the marker: queued at once, and every completion still retained when read.
  const room = Math.min(count(status?.maxQueuedCommands) - count(status?.queuedCommands), count(status?.maxEvents) - 1);
  if (room < 2) return undefined;
  let settled = 0;
  while (settled < cases.length) {
    const chunk = cases.slice(settled, settled + room);
    const passed = await settleChunk(ctx, conn, spec, pool, chunk);
    settled += passed;
    if (passed < chunk.length) break;
  }
  return settled;
}

/** One chunk of settleTogether: how many of its cases, from the first, passed. */
async function settleChunk(
  ctx: CheckContext,
  conn: Connection,
  { rule, kind, field }: CommandField,
  pool: string[],
  chunk: Command[],
): Promise<number> {
  // The field is judged only on a type whose plain command completes.
  for (const type of new Set(chunk.map((c) => c.type))) if (await plainCompletes(ctx, conn, type)) return 0;
  const invalid = ctx.contract.codes["error.invalid-params"];
  const cursor = await latestSeq(ctx, conn);
  /** Each case acted: its commandSeq, or undefined where it was rejected as judgeField lets it be. */
  const acted: { cmd: Command; seq?: number }[] = [];
  const seqs = new Set<number>();
  for (const cmd of chunk) {
    // A full queue is not waited out here: that case runs alone.
    const reply = await ctx.call(conn, rpc("act", cmd, "act"));
    if (errorCode(reply) === invalid && (kind === "identifier" || !isWellTyped(kind, cmd[field]))) {
      acted.push({ cmd });
      continue;
    }
    const seq = resultOf(reply)?.commandSeq;
    if (resultOf(reply)?.accepted !== true || !Number.isSafeInteger(seq) || seqs.has(seq as number)) break;
    seqs.add(seq as number);
    acted.push({ cmd, seq: seq as number });
  }
  const step = async () => {
    const marked = resultOf(await ctx.call(conn, rpc("act", { type: pool[0]! }, "step")));
    return marked?.accepted === true && Number.isSafeInteger(marked.commandSeq)
      ? (marked.commandSeq as number)
      : undefined;
  };
  // A settle judges nothing: a completion it stops waiting for only leaves its case to run alone, where the full wait
  // judges it. So it waits a few steps of the loop's pace, not the wait that calls a command lost.
  const mean = ctx.ledger?.meanStepMs;
  const waitMs = mean === undefined ? undefined : Math.max(SETTLE_FLOOR_MS, Math.ceil(mean * SETTLE_STEPS));
  const done = seqs.size
    ? await collectCompletions(ctx, conn, cursor, seqs, { step, ...(waitMs === undefined ? {} : { waitMs }) })
    : undefined;
  // A completion after a case's own shows the game loop went on after it (the marker's, for the last).
  const last = Math.max(...[...(done?.values() ?? [])].flat().map((c) => c.seq));
  let passed = 0;
  for (const { cmd, seq } of acted) {
    if (seq !== undefined) {
      const list = done?.get(seq);
      const own = list?.length === 1 && !list[0]!.evicted ? list[0]!.seq : undefined;
      if (own === undefined || !(last > own) || judgeCompletion(list, seq, cmd, [rule])) break;
      completed(ctx, cmd.type);
    }
    passed++;
  }
  return passed;
}

export const checks: Check[] = [...fieldChecks];
