// The commands' family: acts of every kind (extreme fields, unknown types) and chains of appends.

import type { StepDefs } from "./step.js";

export const COMMAND_STEPS: StepDefs<"act" | "appends"> = {
  act: { apply: async (step, _model, real) => void (await real.act(step.slot, step.command, step.extreme)) },
  appends: {
    async apply(step, _model, real) {
      for (let i = 0; i < step.count; i++) await real.act(step.slot, { type: step.type, append: true });
    },
  },
};
