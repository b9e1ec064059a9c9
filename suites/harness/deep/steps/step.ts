// A step of a deep session as a command (the shape of fast-check's ICommand): whether the model lets it run, what it
// does to the bridge and the model, and how it reads in a counterexample. The steps of each family of state cells
// are defined in the files beside this one.

import type fc from "fast-check";
import type { Step, StepKind } from "../../../../generators/sessionStep.js";
import type { DeepModel } from "../model.js";
import type { DeepReal } from "../real.js";

/** What one kind of step does: `apply` acts and judges; `check` says whether the model lets it run (default: yes). */
export interface StepDef<K extends StepKind> {
  check?(step: Extract<Step, { kind: K }>, model: DeepModel): boolean;
  apply(step: Extract<Step, { kind: K }>, model: DeepModel, real: DeepReal): Promise<void>;
}

/** Step definitions by kind, for the kinds of one family. */
export type StepDefs<K extends StepKind> = { [k in K]: StepDef<k> };

/** Steps that use a slot other than the first need the model's second connection. */
export const onSlot = (step: Step, model: DeepModel): boolean => !("slot" in step) || step.slot === 0 || model.two;

export class StepCommand implements fc.AsyncCommand<DeepModel, DeepReal> {
  constructor(
    readonly step: Step,
    private readonly def: StepDef<StepKind>,
  ) {}

  check(model: Readonly<DeepModel>): boolean {
    return onSlot(this.step, model as DeepModel) && (this.def.check?.(this.step as never, model as DeepModel) ?? true);
  }

  /** The step, then a look at the completions that arrived meanwhile. */
  async run(model: DeepModel, real: DeepReal): Promise<void> {
    await this.def.apply(this.step as never, model, real);
    await real.follow();
  }

  toString(): string {
    return describeStep(this.step);
  }
}

/** How a step reads in a counterexample: what it does, without a 2000-character field. */
export function describeStep(step: Step): string {
  const { kind, ...rest } = step;
  if (kind === "act" && JSON.stringify(step.command).length > 160)
    return `act(${JSON.stringify(step.command).slice(0, 120)}…, conn ${step.slot})`;
  return `${kind}(${JSON.stringify(rest)})`;
}
