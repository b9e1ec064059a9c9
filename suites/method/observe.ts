import { type Check, describeReply, fail, pass, resultOf, rpc } from "../harness/check.js";

export const observeSeq: Check = {
  id: "method.observe/sequence",
  rules: ["method.observe"],
  description: "Calls observe several times, with status and events between, and compares the sequences.",
  async run(ctx) {
    const conn = await ctx.session();
    let last = -Infinity;
    for (let i = 0; i < 5; i++) {
      const reply = await ctx.call(conn, rpc("observe", {}, i));
      const r = resultOf(reply);
      if (
        !r ||
        !Number.isSafeInteger(r.observationSeq) ||
        typeof r.observation !== "object" ||
        r.observation === null ||
        Array.isArray(r.observation)
      ) {
        return fail(
          "observe did not return {observationSeq: integer, observation: object}.",
          "{observationSeq: integer, observation: object}",
          describeReply(reply),
        );
      }
      if ((r.observationSeq as number) < last)
        return fail(
          `observationSeq went back from ${last} to ${r.observationSeq}.`,
          "observationSeq never decreases",
          describeReply(reply),
        );
      last = r.observationSeq as number;
      await ctx.call(conn, rpc("status", {}, `s${i}`));
    }
    return pass("observe returned well-formed snapshots with a sequence that never decreased.");
  },
};

export const checks: Check[] = [observeSeq];
