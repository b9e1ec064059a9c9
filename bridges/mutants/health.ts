import {
  CODES,
  type Json,
  type JsonObject,
  type QueuedCommand,
  ReferenceBridge,
  RpcError,
  type Session,
} from "../reference/bridge.js";
import { alsoBreaking, FILLABLE, type Mutant, mutant } from "./mutant.js";

// Faults that make a bridge stop doing something while the rest of it serves: each must be named
// once, on its own rule, and must not pass for a game loop that died.

export const mutants: Mutant[] = [
  mutant(
    "cursor-as-index",
    "method.events/cursor-edges",
    "method.events",
    "reads the events cursor as an index into what it retains, so once the history evicts, pages start in the wrong place",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null, idText?: string): Json {
        super.events(params, id, idText); // ill-typed params are still rejected: only reading the cursor is bent
        const page = super.events({ ...params, afterSeq: 0, limit: 500 }, id, idText) as {
          latestSeq: number;
          events: unknown[];
        };
        const index = Number(params.afterSeq ?? 0);
        const limit = Math.min(Math.max(Number(params.limit ?? 100), 1), 500);
        return { latestSeq: page.latestSeq, events: page.events.slice(index, index + limit) as Json[] };
      }
    },
  ),
  // Its status counts the leaked slots, commands that completed, as queued: the count status owes is of commands
  // accepted and not yet completed (as with queued-counts-completed).
  alsoBreaking(
    mutant(
      "leaks-slot-on-failure",
      "error.queue-full/flood",
      "error.queue-full",
      "never frees the queue slot of a command that completes as a failure, so the queue ends up full for good",
      class extends ReferenceBridge {
        private leaked = 0;

        protected override act(params: JsonObject): Json {
          if (!this.commandProblem(params) && this.queue.length + this.leaked >= this.options.maxQueuedCommands)
            throw new RpcError(CODES.queueFull, "Command queue full");
          return super.act(params);
        }

        protected override execute(queued: QueuedCommand): JsonObject {
          const done = super.execute(queued);
          if (done.success === false) this.leaked++;
          return done;
        }

        protected override status(): Json {
          const status = super.status() as JsonObject;
          return { ...status, queuedCommands: (status.queuedCommands as number) + this.leaked };
        }
      },
      "fail",
      FILLABLE,
    ),
    "method.status",
  ),
  mutant(
    "queue-full-wrong-code",
    "error.queue-full/flood",
    "error.queue-full",
    "answers act on a full queue with -32000 instead of -32002",
    class extends ReferenceBridge {
      protected override act(params: JsonObject): Json {
        try {
          return super.act(params);
        } catch (err) {
          throw err instanceof RpcError && err.code === CODES.queueFull ? new RpcError(-32000, "Server busy") : err;
        }
      }
    },
    "fail",
    FILLABLE,
  ),
  mutant(
    "observe-never-answers",
    "method.observe/sequence",
    "method.observe",
    "reads every observe request and never answers it, while every other method is served",
    class extends ReferenceBridge {
      protected override handleLine(session: Session, line: Buffer): JsonObject | undefined {
        const response = super.handleLine(session, line);
        return response && this.methodOf(line) === "observe" ? undefined : response;
      }

      private methodOf(line: Buffer): unknown {
        try {
          return (JSON.parse(line.toString("utf8")) as { method?: unknown }).method;
        } catch {
          return undefined;
        }
      }
    },
  ),
  mutant(
    "reply-without-lf",
    "wire.ndjson/sequence-in-order",
    "wire.ndjson",
    "writes each reply as complete JSON but never the LF after it",
    class extends ReferenceBridge {
      protected override send(session: Session, response: JsonObject): void {
        if (session.socket.writable) session.socket.write(this.line(response));
      }
    },
  ),
];
