import { type Command, command } from "../../generators/command.js";
import { type Check, type CheckContext, describeReply, type Finding, fail, pass, resultOf } from "../harness/check.js";
import { classesFirst } from "../harness/classes.js";
import type { Connection } from "../harness/connection.js";
import { collectCompletions, latestSeq, readEvents } from "../harness/events.js";
import { ACCEPTED, judgedBy, seqAbove } from "../harness/expect.js";
import { act, advertisedTypes, judgeCompletion } from "../harness/lifecycle.js";

export const actLifecycle: Check = {
  id: "method.act/accept-and-complete",
  rules: ["method.act", "integration.command-completion"],
  needs: ["completions"],
  description:
    "Calls act with well-typed commands, their types drawn from observation.availableActions and at random, " +
    "and waits for each one's completion event.",
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
            return judgedBy(
              { kind: "result", expect: ACCEPTED, at: id },
              fail(
                `act ${JSON.stringify(cmd)} was not accepted as {accepted: true, commandSeq: integer}.`,
                `{"accepted":true,"commandSeq":<integer>}`,
                describeReply(reply),
                ["method.act"],
              ),
            );
          }
          const seq = r.commandSeq as number;
          if (seqs.length && seq <= seqs[0]!)
            return judgedBy(
              { kind: "result", expect: [seqAbove("act-1")], at: id },
              fail(
                `commandSeq went from ${seqs[0]} to ${seq}.`,
                "commandSeq strictly increasing",
                describeReply(reply),
                ["method.act"],
              ),
            );
          seqs.push(seq);
        }
        const done = await collectCompletions(ctx, conn, cursor, new Set(seqs));
        for (const seq of seqs) {
          const broken = judgeCompletion(done.get(seq), seq, cmd, ["integration.command-completion"]);
          if (broken) return judgedBy({ kind: "completes", acts: ["act-1", "act-2"], after: "cursor" }, broken);
        }
        return pass("completed");
      },
      {
        // Every advertised type once, then one it does not advertise (which completes too), before random ones.
        ...classesFirst<Command>(
          [...types, "conformance.unadvertised"].map((type) => ({ type })),
          ctx.runs - types.length - 1,
        ),
        restartAfterFailure: true,
      },
    );
  },
};

/** A command no bridge runs as gameplay: it completes (as a failure, being unknown) and changes nothing. */
const NOOP: Command = { type: "conformance.noop" };

/** act, accepted with an integer commandSeq: that seq, or the finding that it was not. */
async function accepted(ctx: CheckContext, conn: Connection, id: string): Promise<number | Finding> {
  const reply = await act(ctx, conn, NOOP, id);
  const seq = resultOf(reply)?.commandSeq;
  if (resultOf(reply)?.accepted === true && Number.isSafeInteger(seq)) return seq as number;
  return judgedBy(
    { kind: "result", expect: ACCEPTED, at: id },
    fail(
      `act ${JSON.stringify(NOOP)} was not accepted as {accepted: true, commandSeq: integer}.`,
      `{"accepted":true,"commandSeq":<integer>}`,
      describeReply(reply),
      ["method.act"],
    ),
  );
}

/** The retained event completing `commandSeq` (a few pages from the oldest), if any. */
async function findCompletion(ctx: CheckContext, conn: Connection, commandSeq: number) {
  let cursor = 0;
  for (let page = 0; page < 4; page++) {
    const { events } = await readEvents(ctx, conn, cursor);
    const found = events.find((e) => e.event.type === "command_completed" && e.event.commandSeq === commandSeq);
    if (found || events.length === 0) return found;
    cursor = events[events.length - 1]!.seq;
  }
  return undefined;
}

export const actAcrossConnections: Check = {
  id: "method.act/across-connections",
  rules: ["method.act", "method.events", "integration.command-completion"],
  needs: ["completions"],
  description:
    "Acts on one connection, waits for the completion and reads latestSeq as a cursor, closes it; on a new " +
    "connection reads latestSeq, acts again and reads the events after the first connection's cursor.",
  note:
    "commandSeq and event seqs belong to the bridge, not to a connection: they keep increasing across " +
    "reconnects, and a cursor read on one connection stays valid on the next",
  async run(ctx) {
    const first = await ctx.session();
    const before = await latestSeq(ctx, first);
    const seq1 = await accepted(ctx, first, "act-first-connection");
    if (typeof seq1 !== "number") return seq1;
    const done = await collectCompletions(ctx, first, before, new Set([seq1]));
    const unfinished = judgeCompletion(done.get(seq1), seq1, NOOP, ["integration.command-completion"]);
    if (unfinished) return judgedBy({ kind: "completes", acts: ["act-first-connection"], after: "cursor" }, unfinished);
    const cursor = await latestSeq(ctx, first);
    first.close();

    const second = await ctx.session();
    const latest = await latestSeq(ctx, second);
    if (latest < cursor)
      return judgedBy(
        {
          kind: "result",
          expect: [{ path: ["result", "latestSeq"], op: ">=", than: { ref: "cursor", path: ["result", "latestSeq"] } }],
        },
        fail(
          `latestSeq went back from ${cursor}, read on the first connection, to ${latest} on the next one.`,
          `latestSeq >= ${cursor}: event seqs are numbered by the bridge, not per connection`,
          `latestSeq ${latest}`,
          ["method.events"],
        ),
      );
    const seq2 = await accepted(ctx, second, "act-second-connection");
    if (typeof seq2 !== "number") return seq2;
    if (seq2 <= seq1)
      return judgedBy(
        { kind: "result", expect: [seqAbove("act-first-connection")] },
        fail(
          `commandSeq went from ${seq1} on the first connection to ${seq2} on the next one.`,
          `commandSeq > ${seq1}: command seqs are numbered by the bridge, not per connection`,
          `commandSeq ${seq2}`,
          ["method.act"],
        ),
      );
    const later = await collectCompletions(ctx, second, cursor, new Set([seq2]));
    if (!later.has(seq2)) {
      const retained = await findCompletion(ctx, second, seq2);
      if (retained && retained.seq <= cursor)
        return judgedBy(
          { kind: "completes", acts: ["act-second-connection"], after: "cursor" },
          fail(
            `The command acted on the second connection completed as event ${retained.seq}, not after the cursor ` +
              `${cursor} read on the first one.`,
            `its completion after ${cursor}: a cursor stays valid across connections`,
            JSON.stringify(retained),
            ["method.events"],
          ),
        );
    }
    const broken = judgeCompletion(later.get(seq2), seq2, NOOP, ["integration.command-completion"]);
    if (broken) return judgedBy({ kind: "completes", acts: ["act-second-connection"], after: "cursor" }, broken);
    if (later.mayBeEvicted.has(seq2))
      return pass(
        `commandSeq went from ${seq1} to ${seq2} and latestSeq from ${cursor} to ${latest} across a reconnect; ` +
          `whether the cursor found the second command's completion was not seen${later.note}.`,
      );
    return pass(
      `commandSeq went from ${seq1} to ${seq2} across a reconnect, and the cursor ${cursor} from the first ` +
        "connection found the second command's completion.",
    );
  },
};

export const checks: Check[] = [actLifecycle, actAcrossConnections];
