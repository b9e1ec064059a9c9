import { contract } from "../../protocol/contract.js";
import { INTEGER_FIELDS, type JsonObject, ReferenceBridge } from "../reference/bridge.js";
import { alsoBreaking, type Mutant, mutant } from "./mutant.js";

// Mutants that accept an ill-typed or unadvertised command, then fail to complete it once.

/** Takes any value in an integer field: its game loop meets the ill-typed ones. */
class AcceptsIllTypedIntegers extends ReferenceBridge {
  protected override commandProblem(command: JsonObject): string | undefined {
    return super.commandProblem(
      Object.fromEntries(Object.entries(command).filter(([k]) => !INTEGER_FIELDS.includes(k))),
    );
  }
}

/** Whether a queued command holds an integer field that is not an integer. */
const illTyped = (queued?: { command: JsonObject }): boolean =>
  queued !== undefined && INTEGER_FIELDS.some((k) => k in queued.command && !Number.isSafeInteger(queued.command[k]));

/** The rules of the integer fields. */
const INTEGER_RULES = contract.commandFields.filter((f) => f.kind === "integer").map((f) => f.rule);

/** Commands accepted and then never completed, or completed more than once, by a game loop. */
export const completions: Mutant[] = [
  // Each integer field it accepts ill-typed and never completes is that field's rule broken too, as with
  // silent-on-ill-typed-<field>: the loop dies on any of them.
  alsoBreaking(
    mutant(
      "drain-dies-on-ill-typed",
      "command.x/typed",
      "integration.command-completion",
      "accepts an ill-typed integer field, then its game loop dies on it",
      class extends AcceptsIllTypedIntegers {
        protected override drainOne(): void {
          if (illTyped(this.queue[0])) {
            clearInterval(this.drainTimer); // the loop dies with the command still queued
            return;
          }
          super.drainOne();
        }
      },
    ),
    ...INTEGER_RULES,
  ),
  mutant(
    "completes-again-a-step-later",
    "command.y/typed",
    "integration.command-completion",
    "accepts an ill-typed integer field, completes the command as a failure, then writes its completion again at " +
      "the next step of the game loop",
    class extends AcceptsIllTypedIntegers {
      private again?: JsonObject;
      protected override drainOne(): void {
        if (this.again) this.recordEvent(this.again);
        this.again = undefined;
        const next = this.queue[0];
        super.drainOne();
        if (illTyped(next)) this.again = this.history.at(-1)?.event;
      }
    },
    "fail",
    // A step longer than a guess of one: the second completion comes after a look of a fixed time would end.
    { drainIntervalMs: 50 },
  ),
  mutant(
    "loop-dies-after-ill-typed",
    "command.screen-x/typed",
    "integration.command-completion",
    "accepts an ill-typed integer field and completes the command as a failure, then its game loop dies",
    class extends AcceptsIllTypedIntegers {
      protected override drainOne(): void {
        const next = this.queue[0];
        super.drainOne();
        if (illTyped(next)) clearInterval(this.drainTimer); // the loop dies once the command has completed
      }
    },
  ),
  mutant(
    "completes-ill-typed-every-step",
    "command.int-arg/typed",
    "integration.command-completion",
    "accepts an ill-typed integer field, then completes that command again at every step of its game loop, " +
      "never taking it off the queue",
    class extends AcceptsIllTypedIntegers {
      protected override drainOne(): void {
        const next = this.queue[0];
        if (next && illTyped(next)) this.recordEvent(this.execute(next));
        else super.drainOne();
      }
    },
  ),
  alsoBreaking(
    mutant(
      "move-loop-dies-on-string-x",
      "command.x/typed",
      "command.x",
      'accepts move with any x, then its game loop dies on a string x such as {"type":"move","x":""} (move is ' +
        "the second advertised type, x the first integer field)",
      class extends ReferenceBridge {
        protected override commandProblem(command: JsonObject): string | undefined {
          if (command.type !== "move") return super.commandProblem(command);
          const { x: _, ...rest } = command;
          return super.commandProblem(rest);
        }
        protected override drainOne(): void {
          const next = this.queue[0];
          if (next?.command.type === "move" && typeof next.command.x === "string") {
            clearInterval(this.drainTimer); // int(""): the loop dies with the command still queued
            return;
          }
          super.drainOne();
        }
      },
    ),
    "integration.command-completion",
  ),
];

/** One per optional field: accepts it ill-typed, then drops the command without completing it. */
export const silentOnIllTyped: Mutant[] = contract.commandFields.map(({ field, rule }) =>
  alsoBreaking(
    mutant(
      `silent-on-ill-typed-${field}`,
      `${rule}/typed`,
      rule,
      `accepts an ill-typed ${field}, then never completes that command`,
      class extends ReferenceBridge {
        private illTyped(command: JsonObject): boolean {
          return field in command && super.commandProblem({ type: "probe", [field]: command[field]! }) !== undefined;
        }
        protected override commandProblem(command: JsonObject): string | undefined {
          return this.illTyped(command) ? undefined : super.commandProblem(command);
        }
        protected override drainOne(): void {
          const next = this.queue[0];
          if (next && this.illTyped(next.command)) {
            this.queue.shift();
            return;
          }
          super.drainOne();
        }
      },
    ),
    "integration.command-completion",
  ),
);
