import type { Oracle } from "../../protocol/verdict.js";
import {
  type Check,
  type CheckContext,
  describeReply,
  type Finding,
  fail,
  pass,
  resultOf,
  rpc,
} from "../harness/check.js";
import type { Connection } from "../harness/connection.js";
import { collectCompletions, latestSeq } from "../harness/events.js";
import { judgedBy } from "../harness/expect.js";
import { act } from "../harness/lifecycle.js";

const SEQ = ["result", "observationSeq"];
/** What observe returns, as an oracle. */
const OBSERVED: Oracle = {
  kind: "result",
  expect: [
    { path: SEQ, is: "integer" },
    { path: ["result", "observation"], is: "object" },
  ],
};
/** observationSeq no lower than in the reply to the earlier observe `id`. */
const notBelow = (id: unknown): Oracle => ({
  kind: "result",
  expect: [{ path: SEQ, op: ">=", than: { ref: id, path: SEQ } }],
});

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
        return judgedBy(
          OBSERVED,
          fail(
            "observe did not return {observationSeq: integer, observation: object}.",
            "{observationSeq: integer, observation: object}",
            describeReply(reply),
          ),
        );
      }
      if ((r.observationSeq as number) < last)
        return judgedBy(
          notBelow(i - 1),
          fail(
            `observationSeq went back from ${last} to ${r.observationSeq}.`,
            "observationSeq never decreases",
            describeReply(reply),
          ),
        );
      last = r.observationSeq as number;
      await ctx.call(conn, rpc("status", {}, `s${i}`));
    }
    return pass("observe returned well-formed snapshots with a sequence that never decreased.");
  },
};

/** Advertised actions tried to move the observation on; a few are enough to see it replaced. */
const MAX_ACTIONS = 3;

/** observe's {observationSeq, observation}, or the finding that it is not that. */
async function observed(
  ctx: CheckContext,
  conn: Connection,
  id: string,
): Promise<{ seq: number; actions: string[] } | Finding> {
  const reply = await ctx.call(conn, rpc("observe", {}, id));
  const r = resultOf(reply);
  const observation = r?.observation;
  if (
    !r ||
    !Number.isSafeInteger(r.observationSeq) ||
    typeof observation !== "object" ||
    observation === null ||
    Array.isArray(observation)
  )
    return judgedBy(
      OBSERVED,
      fail(
        "observe did not return {observationSeq: integer, observation: object}.",
        "{observationSeq: integer, observation: object}",
        describeReply(reply),
      ),
    );
  const listed = (observation as { availableActions?: unknown }).availableActions;
  const actions = Array.isArray(listed) ? listed.filter((a): a is string => typeof a === "string" && a !== "") : [];
  return { seq: r.observationSeq as number, actions };
}

export const observeAcrossConnections: Check = {
  id: "method.observe/across-connections",
  rules: ["method.observe"],
  needs: ["completions"],
  description:
    "Observes on one connection, acts once with each of the first few advertised actions (no arguments) and " +
    "waits for their completions, observes again and closes; then observes on a new connection.",
  note: "observationSeq belongs to the bridge, not to a connection: it never goes back across a reconnect",
  async run(ctx) {
    const first = await ctx.session();
    const start = await observed(ctx, first, "observe-first");
    if ("verdict" in start) return start;
    // Commands give the project a reason to replace its observation, so a sequence counted per
    // connection shows; one that stays put is only seen not to go back.
    // One at a time, each waited for: however small the event history, no completion evicts another unseen.
    for (const type of start.actions.slice(0, MAX_ACTIONS)) {
      const cursor = await latestSeq(ctx, first);
      const seq = resultOf(await act(ctx, first, { type }, `act-${type}`))?.commandSeq;
      if (Number.isSafeInteger(seq)) await collectCompletions(ctx, first, cursor, new Set([seq as number]));
    }
    const end = await observed(ctx, first, "observe-first-again");
    if ("verdict" in end) return end;
    if (end.seq < start.seq)
      return judgedBy(
        notBelow("observe-first"),
        fail(
          `observationSeq went back from ${start.seq} to ${end.seq} on one connection.`,
          "observationSeq never decreases",
          `observationSeq ${end.seq}`,
        ),
      );
    first.close();
    const second = await ctx.session();
    const next = await observed(ctx, second, "observe-second");
    if ("verdict" in next) return next;
    if (next.seq < end.seq)
      return judgedBy(
        notBelow("observe-first-again"),
        fail(
          `observationSeq went back from ${end.seq} on the first connection to ${next.seq} on the next one.`,
          `observationSeq >= ${end.seq}: it is the bridge's, not the connection's`,
          `observationSeq ${next.seq}`,
        ),
      );
    const moved = end.seq > start.seq ? `from ${start.seq} to ${end.seq}` : `at ${end.seq} (it did not move)`;
    return pass(`observationSeq stood ${moved} on the first connection and at ${next.seq} on the next one.`);
  },
};

export const checks: Check[] = [observeSeq, observeAcrossConnections];
