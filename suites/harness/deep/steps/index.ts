// Every step of a deep session, by kind: the command a generated or seed step runs as.

import type { Step, StepKind } from "../../../../generators/sessionStep.js";
import { AUTH_STEPS } from "./auth.js";
import { COMMAND_STEPS } from "./command.js";
import { CONN_STEPS } from "./conn.js";
import { HISTORY_STEPS } from "./history.js";
import { ID_STEPS } from "./id.js";
import { QUEUE_STEPS } from "./queue.js";
import { RACE_STEPS } from "./race.js";
import { READ_STEPS } from "./read.js";
import { StepCommand, type StepDef, type StepDefs } from "./step.js";

const STEPS: StepDefs<StepKind> = {
  ...COMMAND_STEPS,
  ...QUEUE_STEPS,
  ...HISTORY_STEPS,
  ...AUTH_STEPS,
  ...CONN_STEPS,
  ...ID_STEPS,
  ...READ_STEPS,
  ...RACE_STEPS,
};

/** The command that runs `step`. */
export const commandOf = (step: Step): StepCommand => new StepCommand(step, STEPS[step.kind] as StepDef<StepKind>);

export { describeStep, StepCommand } from "./step.js";
