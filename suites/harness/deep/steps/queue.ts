// The queue's family: filled to rejection, freed and filled again; and status read on its own.

import type { Slot } from "../../../../generators/sessionStep.js";
import { Backoff } from "../../events.js";
import type { DeepModel } from "../model.js";
import { check, type DeepReal, FILL_TYPE } from "../real.js";
import type { StepDefs } from "./step.js";

/** Acts until the queue is full; right after, acts again; once status shows room, an act must be accepted. */
async function fillQueue(model: DeepModel, real: DeepReal, slot: Slot): Promise<void> {
  const limits = model.limits;
  if (!limits || model.slots[slot]!.auth !== true) return;
  const max = limits.maxQueuedCommands;
  // Filled, freed and filled again: a queue's worth of turns and a few more.
  if (!real.pace.affords(max + 8, "fill-queue")) {
    real.cov.cannot(["queue.full", "queue.after-rejection", "queue.refilled"], real.pace.reason(max + 8));
    return;
  }
  let full = false;
  for (let i = 0; i < max * 4 + 16 && !full; i++) {
    const outcome = await real.act(slot, { type: FILL_TYPE });
    if (outcome === "refused") return;
    full = outcome === "full";
    if (!full) await real.status(slot);
  }
  if (!full) return; // the bridge drains faster than one client fills: nothing to judge
  await real.act(slot, { type: FILL_TYPE });
  const until = Date.now() + real.ctx.timeoutMs * 2;
  const pause = new Backoff();
  let status = await real.status(slot);
  while (status && status.queuedCommands >= max) {
    check(
      Date.now() < until,
      "integration.command-completion",
      `The queue stayed full for ${real.ctx.timeoutMs * 2} ms: queued commands are not completing.`,
      "a full queue drains as the bridge completes its commands",
      JSON.stringify(status),
    );
    await pause.wait(until);
    status = await real.status(slot);
  }
  if (!status) return;
  const outcome = await real.act(slot, { type: FILL_TYPE });
  check(
    outcome !== "full",
    "error.queue-full",
    `act was rejected as full right after status reported ${status.queuedCommands} of ${max} queued (the queue had been full and drained).`,
    "accepted: the queue has room",
    `${real.ctx.contract.codes["error.queue-full"]}`,
  );
  // And full once more: a queue that rejected and drained fills and rejects again.
  for (let i = 0; i < max + 8; i++) {
    const again = await real.act(slot, { type: FILL_TYPE });
    if (again === "refused") return;
    if (again === "full") {
      real.cov.reach("queue.refilled");
      return;
    }
  }
}

export const QUEUE_STEPS: StepDefs<"fill-queue" | "status"> = {
  "fill-queue": { apply: (step, model, real) => fillQueue(model, real, step.slot) },
  status: { apply: async (step, _model, real) => void (await real.status(step.slot)) },
};
