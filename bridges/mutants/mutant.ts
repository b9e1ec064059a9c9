import type { RuleId } from "../../protocol/contract.js";
import type { BridgeOptions, ReferenceBridge } from "../reference/bridge.js";

// Deliberately broken bridges: each bends the reference in one place and must make
// the suite fail on the rule it names. They prove every check can fail.

export interface Mutant {
  name: string;
  /** The check that must catch it. */
  check: string;
  /** The rule a correct suite fails this bridge on (or warns on, for a SHOULD). */
  breaks: RuleId;
  verdict: "fail" | "warn";
  /**
   * Rules besides `breaks` that its one fault really breaks (a queue that drops a command also never answers
   * the queue-full error): a whole run fails these and no others.
   */
  alsoBreaks?: RuleId[];
  description: string;
  /**
   * Limits the check needs to reach the fault (e.g. a history over the events page limit): create
   * applies them over the options given, and a conformant bridge compared with it takes them too.
   */
  options?: BridgeOptions;
  create(options?: BridgeOptions): ReferenceBridge;
}

/**
 * A game loop slow enough that a client on a busy machine still fills the queue: a full queue's faults show
 * only once acts come faster than commands complete, and a loop of a few milliseconds drains as fast as a
 * client that reads events between acts can act when it gets little of the machine.
 */
export const FILLABLE: BridgeOptions = { drainIntervalMs: 20 };

export const mutant = (
  name: string,
  check: string,
  breaks: RuleId,
  description: string,
  Bridge: typeof ReferenceBridge,
  verdict: "fail" | "warn" = "fail",
  limits?: BridgeOptions,
): Mutant => ({
  name,
  check,
  breaks,
  verdict,
  description,
  ...(limits ? { options: limits } : {}),
  create: (options) => new Bridge({ ...options, ...limits }),
});

/** The mutant, also failing `rules` by its one fault. */
export const alsoBreaking = (m: Mutant, ...rules: RuleId[]): Mutant => ({ ...m, alsoBreaks: rules });
