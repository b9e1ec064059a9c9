import { type Command, command, ILL_TYPED, isWellTyped } from "../../generators/command.js";
import { contract } from "../../protocol/contract.js";
import { type Check, describeReply, errorCode, fail, pass, resultOf, warn } from "../harness/check.js";
import { collectCompletions, latestSeq } from "../harness/events.js";
import { ACCEPTED, judgedBy } from "../harness/expect.js";
import { act, advertisedTypes, judgeCompletion } from "../harness/lifecycle.js";

/** One check per optional field, so each field's rule gets a verdict of its own. */
export const fieldChecks: Check[] = contract.commandFields.map(({ field, rule, kind }) => ({
  id: `${rule}/typed`,
  rules: [rule, "integration.command-completion"],
  needs: ["completions"],
  description: `Calls act with ${field} set to well- and ill-typed values (command types from observation.availableActions and at random), and follows each accepted command to its completion.`,
  note: "an ill-typed value is rejected as invalid params, or accepted and completed; never accepted and then left silent",
  async run(ctx) {
    const types = await advertisedTypes(ctx, await ctx.session());
    const runs = Math.max(5, Math.ceil(ctx.runs / 4));
    // Every advertised type with every ill-typed value first: a handler that chokes on one is found for sure.
    const examples = types
      .flatMap((type) => ILL_TYPED[kind].map((value) => ({ type, [field]: value }) as Command))
      .slice(0, Math.ceil(ctx.runs / 2));
    return ctx.property(
      command({ types, illTyped: true, fields: [field], minFields: 1 }),
      async (cmd) => {
        const ill = !isWellTyped(kind, cmd[field]);
        const conn = await ctx.session();
        const cursor = await latestSeq(ctx, conn);
        const reply = await act(ctx, conn, cmd, "act");
        const invalid = ctx.contract.codes["error.invalid-params"];
        if (errorCode(reply) === invalid) {
          // Identifiers are project-defined, so rejecting one of those is the bridge's call.
          return ill || kind === "identifier"
            ? pass("rejected")
            : judgedBy(
                { kind: "result", expect: ACCEPTED },
                fail(`act rejected a well-typed ${field}: ${JSON.stringify(cmd)}.`, "accepted", describeReply(reply), [
                  rule,
                ]),
              );
        }
        const r = resultOf(reply);
        const rejectable = ill || kind === "identifier" ? [invalid!] : [];
        if (r?.accepted !== true || !Number.isSafeInteger(r.commandSeq)) {
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
        const done = await collectCompletions(ctx, conn, cursor, new Set([seq]));
        const broken = judgeCompletion(done.get(seq), seq, cmd, [rule, "integration.command-completion"]);
        if (broken) return judgedBy({ kind: "completes", acts: ["act"], after: "cursor", orCodes: rejectable }, broken);
        if (ill)
          return warn(
            `act accepted an ill-typed ${field} (it completed; the strict reading rejects it with ${invalid}).`,
            String(invalid),
            describeReply(reply),
            [rule],
          );
        return pass("completed");
      },
      { runs, examples, restartAfterFailure: true },
    );
  },
}));

export const checks: Check[] = [...fieldChecks];
