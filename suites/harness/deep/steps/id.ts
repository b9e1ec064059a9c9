// The ids' family: pings with ids of every JSON type, one repeating the id of the request before it, and one id on
// requests of different methods, on one connection and again on the next.

import type { Slot } from "../../../../generators/sessionStep.js";
import { idCell } from "../../cells.js";
import { describeReply, resultOf } from "../../check.js";
import { check, type DeepReal } from "../real.js";
import type { StepDefs } from "./step.js";

/** What a result of each method has that the others' lack: a reply of another method is told apart by it. */
const ANSWERS: Record<string, (r: Record<string, unknown>) => boolean> = {
  ping: (r) => r.ok === true,
  status: (r) => Number.isSafeInteger(r.maxQueuedCommands) && Number.isSafeInteger(r.maxEvents),
  observe: (r) => "observation" in r && Number.isSafeInteger(r.observationSeq),
  events: (r) => Array.isArray(r.events) && Number.isSafeInteger(r.latestSeq),
};
const PARAMS: Record<string, Record<string, unknown>> = { events: { limit: 1 } };

/** `methods` in turn with one id: each reply echoes it (the harness judges that) and answers its own method. */
async function sameId(real: DeepReal, slot: Slot, id: unknown, methods: string[], used: string[]): Promise<void> {
  for (const method of methods) {
    const reply = await real.call(slot, method, PARAMS[method] ?? {}, { id, hasId: true });
    const r = resultOf(reply);
    if (real.m.slots[slot]!.auth === true && r) {
      const other = used.find((m) => m !== method && !ANSWERS[method]!(r) && ANSWERS[m]!(r));
      check(
        other === undefined,
        "wire.response-envelope",
        `${method} with the id ${JSON.stringify(id)}, used before for ${other}, got the reply of that ${other}.`,
        `the ${method} request's own result`,
        describeReply(reply),
      );
    }
    used.push(method);
  }
}

async function sameIdStep(real: DeepReal, slot: Slot, id: unknown, methods: string[], across: boolean) {
  const used: string[] = [];
  await sameId(real, slot, id, methods, used);
  real.cov.reach(idCell(id));
  if (new Set(used).size > 1) real.cov.reach("id.across-methods");
  if (!across) return;
  // The next connection starts with the method the last one ended with least recently.
  await real.openSlot(slot, true);
  await sameId(real, slot, id, [...methods.slice(0, -1)].reverse().concat(methods.at(-1)!), used);
  real.cov.reach("id.across-connections");
}

export const ID_STEPS: StepDefs<"ping" | "same-id"> = {
  ping: {
    async apply(step, _model, real) {
      for (const id of step.ids) await real.ping(step.slot, id, false);
      if (step.repeat) await real.ping(step.slot, undefined, true);
    },
  },
  "same-id": { apply: (step, _model, real) => sameIdStep(real, step.slot, step.id, step.methods, step.across) },
};
