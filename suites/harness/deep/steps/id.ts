// The ids' family: pings with ids of every JSON type, and one repeating the id of the request before it.

import type { StepDefs } from "./step.js";

export const ID_STEPS: StepDefs<"ping"> = {
  ping: {
    async apply(step, _model, real) {
      for (const id of step.ids) await real.ping(step.slot, id, false);
      if (step.repeat) await real.ping(step.slot, undefined, true);
    },
  },
};
