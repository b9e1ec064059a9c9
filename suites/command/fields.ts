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
} from "../harness/check.js";
import { classesFirst, cover } from "../harness/classes.js";
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

export const checks: Check[] = [...fieldChecks];
