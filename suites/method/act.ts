import { command } from "../../generators/command.js";
import { type Check, describeReply, fail, pass, resultOf } from "../harness/check.js";
import { collectCompletions, latestSeq } from "../harness/events.js";
import { act, advertisedTypes, judgeCompletion } from "../harness/lifecycle.js";

export const actLifecycle: Check = {
  id: "method.act/accept-and-complete",
  rules: ["method.act", "integration.command-completion"],
  description:
    "Calls act with well-typed commands, their types drawn from observation.availableActions and at random, and waits for each one's completion event.",
  note: "commandSeq increases; every accepted command completes exactly once",
  async run(ctx) {
    const types = await advertisedTypes(ctx, await ctx.session());
    return ctx.property(
      command({ types }),
      async (cmd) => {
        const conn = await ctx.session();
        const cursor = await latestSeq(ctx, conn);
        // The command twice: the second commandSeq must be above the first (a restart between cases resets them).
        const seqs: number[] = [];
        for (const id of ["act-1", "act-2"]) {
          const reply = await act(ctx, conn, cmd, id);
          const r = resultOf(reply);
          if (r?.accepted !== true || !Number.isSafeInteger(r.commandSeq)) {
            return fail(
              `act ${JSON.stringify(cmd)} was not accepted as {accepted: true, commandSeq: integer}.`,
              `{"accepted":true,"commandSeq":<integer>}`,
              describeReply(reply),
              ["method.act"],
            );
          }
          const seq = r.commandSeq as number;
          if (seqs.length && seq <= seqs[0]!)
            return fail(
              `commandSeq went from ${seqs[0]} to ${seq}.`,
              "commandSeq strictly increasing",
              describeReply(reply),
              ["method.act"],
            );
          seqs.push(seq);
        }
        const done = await collectCompletions(ctx, conn, cursor, new Set(seqs));
        for (const seq of seqs) {
          const broken = judgeCompletion(done.get(seq), seq, cmd, ["integration.command-completion"]);
          if (broken) return broken;
        }
        return pass("completed");
      },
      { restartAfterFailure: true },
    );
  },
};

export const checks: Check[] = [actLifecycle];
