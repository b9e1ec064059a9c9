// How the deep check runs its sequences: each a session of commands over the model and the bridge, from the bridge
// as it ought to start (fresh where this tool owns it, on from the sequence before where that is how it is judged),
// a fault found failing the rule it broke (the smoke rule where it names none); and what ran, counted.

import fc from "fast-check";
import type { Coverage } from "../cells.js";
import { type CheckContext, Fault, type Finding, fail, pass } from "../check.js";
import { tour } from "../deep-tour.js";
import { finish } from "./finish.js";
import { DeepModel, type SinceStart, sinceStart } from "./model.js";
import type { LoopAllowance } from "./pace.js";
import { DeepReal } from "./real.js";
import { commandOf } from "./steps/index.js";

type Commands = Iterable<fc.AsyncCommand<DeepModel, DeepReal>>;

export class Sequences {
  /** Advertised types acted on, over every case: the one cell no single case needs to reach alone. */
  private readonly typesActed = new Set<string>();
  private life: SinceStart = sinceStart(this.typesActed);
  /**
   * The seed sequences are the check's classes: one per family, run in every profile before any generated
   * case, and not bound by the budget (as classes first are everywhere), so quick finds what standard finds.
   */
  readonly seeds: fc.AsyncCommand<DeepModel, DeepReal>[][];
  /** When generated sequences stop being run (the phase's share of the budget). */
  budgetEnd = 0;
  failing = false;
  ran = 0;
  /** Generated sequences past the budget, not run. */
  beyond = 0;
  /** Sequences the check's deadline cut short, not judged. */
  cutShort = 0;

  constructor(
    private readonly ctx: CheckContext,
    private readonly cov: Coverage,
    private readonly types: string[],
    private readonly two: boolean,
    private readonly pace: LoopAllowance,
    /** Replaying a case or aiming at cells: the seed sequences are not treated apart. */
    private readonly apart: boolean,
  ) {
    this.seeds = tour(types, two).map((steps) => steps.map(commandOf));
  }

  /** One session of the commands, from a fresh bridge where this tool owns it (at an endpoint, as it is). */
  private async session(commands: Commands, fresh: boolean): Promise<Finding> {
    try {
      if (fresh && (await this.ctx.fresh())) this.life = sinceStart(this.typesActed);
      const model = new DeepModel(this.life, this.types, this.two, this.ctx.tokenConfigured);
      const real = await DeepReal.open(this.ctx, this.cov, this.pace, model);
      await fc.asyncModelRun(() => ({ model, real }), commands);
      const broken = await finish(real);
      if (broken) {
        this.failing = true;
        return broken;
      }
    } catch (err) {
      // A session that goes wrong fails the rule it broke, once; the smoke rule where the fault is the session's.
      if (err instanceof Fault && err.kind === "violation") {
        this.failing = true;
        const { rule = "validation.protocol-smoke", expected = "", actual = "" } = err.detail;
        return fail(err.message, expected, actual, [rule]);
      }
      if (err instanceof Fault && (err.kind === "unserved" || err.kind === "target-lost")) this.failing = true;
      if (err instanceof Fault && err.kind === "deadline") this.cutShort++;
      throw err;
    }
    return pass("the session matched the model");
  }

  /**
   * Judges one sequence. Every generated case from a fresh bridge where this tool owns it, so a failing case fails
   * alike alone: shrunk and replayed. At an endpoint, cases follow one another on the bridge as it is. So do the
   * seed sequences here, but for one start afresh, so a slow bridge's starts are not paid once per family. The first
   * is tried on the bridge as the checks before left it: it fills the history to maxEvents whatever it held, so a
   * history an earlier check filled is topped up, not made again (at a game's pace a fill takes seconds). Only a pass
   * counts there: what those checks left is theirs to answer for, so anything else is judged again from a fresh
   * bridge, as every replay of it runs. The second starts a fresh bridge (an empty history, then one below
   * maxEvents), and the others follow on it: what they find is theirs, judged where found, and the recheck replays
   * it alone from a fresh bridge, which grades a fault that needs the sequences before it as seen once.
   */
  judge = async (commands: Commands): Promise<Finding> => {
    const seed = this.seeds.indexOf(commands as (typeof this.seeds)[number]);
    if (!this.failing && seed === -1 && Date.now() > this.budgetEnd) {
      this.beyond++;
      return pass("not run: past the time budget");
    }
    this.ran++;
    const at = this.apart ? -1 : seed;
    if (at === 0 && this.ran === 1) {
      let thrown: unknown;
      const asItStands = await this.session(commands, false).catch((err: unknown) => void (thrown = err));
      if (asItStands?.verdict === "pass") return asItStands;
      // Where no bridge can be started afresh (an endpoint, or past the deadline), what was found stands.
      if (!(await this.ctx.fresh())) {
        if (asItStands) return asItStands;
        throw thrown;
      }
      this.failing = false;
      this.life = sinceStart(this.typesActed);
      return this.session(commands, false);
    }
    if (at > 1 && !this.failing) {
      const found = await this.session(commands, false);
      return found.verdict === "pass"
        ? found
        : { ...found, message: `${found.message} (after the seed sequences before it, on the bridge they left)` };
    }
    return this.session(commands, true);
  };
}
