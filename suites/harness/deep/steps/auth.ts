// The authorization family: right and wrong tokens in runs, on a connection authorized or not. Where no token is
// configured there is nothing to send (real.auth does nothing).

import type { StepDefs } from "./step.js";

export const AUTH_STEPS: StepDefs<"auth"> = {
  auth: { apply: (step, _model, real) => real.auth(step.slot, step.right, step.times) },
};
