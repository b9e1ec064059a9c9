// The races: acts, observes and status reads on two connections at once. They run only where the model has a second
// connection (the bridge serves two at once).

import { describeReply, errorCode, resultOf, rpc } from "../../check.js";
import type { DeepModel } from "../model.js";
import { check, type DeepReal, FILL_TYPE } from "../real.js";
import type { StepDefs } from "./step.js";

const twoConnections = (_step: unknown, model: DeepModel) => model.two;

/** Acts on two or three connections at once: every accepted one gets its own, higher commandSeq. */
async function raceActs(model: DeepModel, real: DeepReal, count: number): Promise<void> {
  await real.authorized(0);
  await real.authorized(1);
  const extra = count > 2 ? await real.ctx.connect({ alongside: true }) : undefined;
  if (extra && real.ctx.tokenConfigured) await real.ctx.call(extra, real.ctx.authRequest("race-auth"));
  const conns = [real.conn(0), real.conn(1), ...(extra ? [extra] : [])];
  const type = model.types[0] ?? FILL_TYPE;
  const replies = await Promise.all(conns.map((c, i) => real.ctx.call(c, rpc("act", { type }, `race-${i}`))));
  extra?.close();
  const before = model.commandSeq;
  const seqs: number[] = [];
  for (const reply of replies) {
    if (errorCode(reply) === real.ctx.contract.codes["error.queue-full"]) continue;
    const seq = resultOf(reply)?.commandSeq;
    check(
      resultOf(reply)?.accepted === true && Number.isSafeInteger(seq),
      "method.act",
      "An act sent at the same time as another on a second connection was not accepted.",
      `{"accepted":true,"commandSeq":<integer>} or ${real.ctx.contract.codes["error.queue-full"]}`,
      describeReply(reply),
    );
    seqs.push(seq as number);
  }
  const shown = `commandSeq ${seqs.join(", ")} (the last before: ${before})`;
  check(
    new Set(seqs).size === seqs.length,
    "method.act",
    `Acts on ${conns.length} connections at once got the same commandSeq.`,
    "a distinct commandSeq per accepted command",
    shown,
  );
  check(
    seqs.every((s) => s > before),
    "method.act",
    "An act on a second connection got a commandSeq not above the last one.",
    "commandSeq increasing",
    shown,
  );
  real.pace.spent += seqs.length;
  for (const seq of seqs) {
    model.accepted.set(seq, { type });
    model.commandSeq = Math.max(model.commandSeq, seq);
  }
  model.justRejected = false;
  if (seqs.length > 1) real.cov.reach("race.acts");
}

/** An act, then observe on the second connection while the first follows the command to its completion. */
async function raceObserve(model: DeepModel, real: DeepReal): Promise<void> {
  await real.authorized(0);
  await real.authorized(1);
  if ((await real.act(0, { type: model.types[0] ?? FILL_TYPE })) !== "accepted") return;
  const seq = model.commandSeq;
  const until = Date.now() + real.ctx.timeoutMs * 2;
  const unseen = model.unseen;
  let observed = 0;
  while (!(await real.settled([seq], unseen)) && Date.now() < until) {
    await Promise.all([real.observe(1), real.follow()]);
    observed++;
  }
  if (model.completions.has(seq) && observed) real.cov.reach("race.observe-completion");
}

/** Queues a few commands, then reads status on the second connection while the first follows them draining. */
async function raceStatus(model: DeepModel, real: DeepReal): Promise<void> {
  await real.authorized(0);
  await real.authorized(1);
  const max = model.limits?.maxQueuedCommands ?? 1;
  for (let i = 0; i < Math.min(max, 8); i++) if ((await real.act(0, { type: FILL_TYPE })) !== "accepted") break;
  const until = Date.now() + real.ctx.timeoutMs * 2;
  let last: number | undefined;
  let drained = false;
  while (Date.now() < until) {
    const [status] = await Promise.all([real.status(1), real.follow()]);
    if (!status) return;
    check(
      last === undefined || status.queuedCommands <= last,
      "method.status",
      `queuedCommands rose from ${last} to ${status.queuedCommands} while the queue drained and nothing was acted.`,
      "queuedCommands never rises without an act",
      JSON.stringify(status),
    );
    if (last !== undefined && status.queuedCommands < last) drained = true;
    last = status.queuedCommands;
    if (last === 0) break;
  }
  if (drained) real.cov.reach("race.status-draining");
}

export const RACE_STEPS: StepDefs<"race-acts" | "race-observe" | "race-status"> = {
  "race-acts": { check: twoConnections, apply: (step, model, real) => raceActs(model, real, step.count) },
  "race-observe": { check: twoConnections, apply: (_step, model, real) => raceObserve(model, real) },
  "race-status": { check: twoConnections, apply: (_step, model, real) => raceStatus(model, real) },
};
