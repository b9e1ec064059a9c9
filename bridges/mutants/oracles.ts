import { CODES, type Json, type JsonObject, ReferenceBridge, RpcError } from "../reference/bridge.js";
import { alsoBreaking, FILLABLE, type Mutant, mutant } from "./mutant.js";

/** The reference's act with the capacity test bent: `full` says when the queue rejects. */
class QueueBridge extends ReferenceBridge {
  protected full(): boolean {
    return this.queue.length >= this.options.maxQueuedCommands;
  }
  protected override act(params: JsonObject): Json {
    const problem = this.commandProblem(params);
    if (problem) throw new RpcError(CODES.invalidParams, `Invalid params: ${problem}`);
    if (this.full()) throw new RpcError(CODES.queueFull, "Command queue full");
    const seq = ++this.commandSeq;
    this.queue.push({ seq, command: params });
    return { accepted: true, commandSeq: seq };
  }
}

/** The reference's history with the retention bent: `keep` is how many events it retains. */
class HistoryBridge extends ReferenceBridge {
  protected keep(): number {
    return this.options.maxEvents;
  }
  protected override recordEvent(event: JsonObject): void {
    this.history.push({ seq: ++this.eventSeq, event });
    while (this.history.length > this.keep()) this.history.shift();
  }
}

const withStatus = (change: (status: JsonObject) => JsonObject) =>
  class extends ReferenceBridge {
    protected override status(): Json {
      return change(super.status() as JsonObject);
    }
  };

/** Mutants for the numbers a bridge advertises (status, queue and history limits, sequences). */
export const mutants: Mutant[] = [
  mutant(
    "status-wrong-port",
    "method.status/endpoint",
    "method.status",
    "status reports the port after the one it listens on",
    withStatus((s) => ({ ...s, port: (s.port as number) + 1 })),
  ),
  mutant(
    "status-wrong-host",
    "method.status/endpoint",
    "method.status",
    "status reports a documentation address it is not bound to",
    withStatus((s) => ({ ...s, host: "192.0.2.1" })),
  ),
  mutant(
    "queued-always-zero",
    "method.status/queued-commands",
    "method.status",
    "status reports queuedCommands 0 whatever the queue holds",
    withStatus((s) => ({ ...s, queuedCommands: 0 })),
  ),
  mutant(
    "queued-counts-completed",
    "method.status/queued-commands",
    "method.status",
    "queuedCommands counts completed commands too, up to the limit",
    class extends ReferenceBridge {
      protected override status(): Json {
        const s = super.status() as JsonObject;
        return { ...s, queuedCommands: Math.min(this.options.maxQueuedCommands, this.commandSeq) };
      }
    },
  ),
  mutant(
    "queue-full-one-early",
    "error.queue-full/flood",
    "error.queue-full",
    "rejects with -32002 once maxQueuedCommands - 1 are queued",
    class extends QueueBridge {
      protected override full(): boolean {
        return this.queue.length >= this.options.maxQueuedCommands - 1;
      }
    },
    "fail",
    FILLABLE,
  ),
  // A queue past its configured maxQueuedCommands is also a queue not bounded by the limit status exposes.
  alsoBreaking(
    mutant(
      "queue-holds-one-more",
      "error.queue-full/flood",
      "error.queue-full",
      "accepts one command past the limit: the queue holds maxQueuedCommands + 1",
      class extends QueueBridge {
        protected override full(): boolean {
          return this.queue.length > this.options.maxQueuedCommands;
        }
      },
      "fail",
      FILLABLE,
    ),
    "integration.bounded-state",
  ),
  // A queue that never fills is also a queue without a bound (bounded state).
  alsoBreaking(
    mutant(
      "queue-never-full",
      "error.queue-full/flood",
      "error.queue-full",
      "never rejects act: the queue grows without bound",
      class extends QueueBridge {
        protected override full(): boolean {
          return false;
        }
      },
      "fail",
      FILLABLE,
    ),
    "integration.bounded-state",
  ),
  mutant(
    "history-one-short",
    "integration.bounded-state/history-exact",
    "integration.bounded-state",
    "retains maxEvents - 1 events",
    class extends HistoryBridge {
      protected override keep(): number {
        return this.options.maxEvents - 1;
      }
    },
  ),
  mutant(
    "history-one-over",
    "integration.bounded-state/history-exact",
    "integration.bounded-state",
    "retains maxEvents + 1 events",
    class extends HistoryBridge {
      protected override keep(): number {
        return this.options.maxEvents + 1;
      }
    },
  ),
  mutant(
    "history-keeps-oldest",
    "integration.bounded-state/history-exact",
    "integration.bounded-state",
    "when the history is full it evicts the second-oldest event, keeping the first forever",
    class extends ReferenceBridge {
      protected override recordEvent(event: JsonObject): void {
        this.history.push({ seq: ++this.eventSeq, event });
        while (this.history.length > this.options.maxEvents) this.history.splice(1, 1);
      }
    },
  ),
  mutant(
    "status-events-off-by-one",
    "integration.bounded-state/history-exact",
    "method.status",
    "status.events counts one event fewer than the history holds",
    withStatus((s) => ({ ...s, events: Math.max(0, (s.events as number) - 1) })),
  ),
  mutant(
    "latest-seq-stale",
    "method.status/sequences",
    "method.events",
    "events answers latestSeq one behind the newest event",
    class extends ReferenceBridge {
      protected override events(params: JsonObject): Json {
        const r = super.events(params) as JsonObject;
        return { ...r, latestSeq: Math.max(0, (r.latestSeq as number) - 1) };
      }
    },
  ),
  mutant(
    "status-observation-seq-behind",
    "method.status/sequences",
    "method.status",
    "status reports the observationSeq before the current one",
    withStatus((s) => ({ ...s, observationSeq: (s.observationSeq as number) - 1 })),
  ),
];
