import type { Socket } from "node:net";
import {
  CODES,
  type Json,
  type JsonObject,
  type QueuedCommand,
  ReferenceBridge,
  type Request,
  RpcError,
  type Session,
} from "../reference/bridge.js";
import { type Mutant, mutant } from "./mutant.js";

// Deep faults: each bridge passes a fresh session and breaks only after a particular history
// (a count of failures, a limit reached and freed, the edge of the history, dozens of
// connections, a repeated id, a chain of appends, a long line, two connections at once), the
// states the deep check steers to.

const DEEP = "validation.protocol-smoke/deep-states";

/** How many connections the leaking bridge serves before it runs out of session slots. */
const SESSION_SLOTS = 40;
/** Wrong tokens after which the locking bridge refuses even the right one. */
const LOCKOUT = 3;
/** The read buffer the block-decoding bridge decodes a long line by. */
const READ_BUFFER = 8192;

export const mutants: Mutant[] = [
  mutant(
    "queue-stuck-after-full",
    DEEP,
    "error.queue-full",
    "once the queue was full, it rejects every act until the queue is empty again, though status shows room",
    class extends ReferenceBridge {
      private full = false;
      protected override act(params: JsonObject): Json {
        if (this.queue.length === 0) this.full = false;
        if (this.full) throw new RpcError(CODES.queueFull, "Command queue full");
        try {
          return super.act(params);
        } catch (err) {
          if (err instanceof RpcError && err.code === CODES.queueFull) this.full = true;
          throw err;
        }
      }
    },
  ),
  mutant(
    "events-skip-in-full-history",
    DEEP,
    "method.events",
    "once the history holds maxEvents, events after a cursor inside it start one event late (a ring index off by one)",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null, idText?: string): Json {
        const page = super.events(params, id, idText) as { latestSeq: number; events: Json[] };
        const after = params.afterSeq;
        const full = this.history.length === this.options.maxEvents;
        if (full && typeof after === "number" && after >= this.history[0]!.seq)
          return { latestSeq: page.latestSeq, events: page.events.slice(1) };
        return page;
      }
    },
  ),
  mutant(
    "auth-lockout-after-failures",
    DEEP,
    "method.auth",
    `after ${LOCKOUT} wrong tokens on a connection, even the right token answers {authorized:false}`,
    class extends ReferenceBridge {
      private readonly failures = new WeakMap<Session, number>();
      protected override auth(session: Session, params: JsonObject): Json {
        const failed = this.failures.get(session) ?? 0;
        if (failed >= LOCKOUT) {
          session.authorized = false;
          return { authorized: false };
        }
        const result = super.auth(session, params) as { authorized: boolean };
        if (!result.authorized) this.failures.set(session, failed + 1);
        return result;
      }
    },
  ),
  mutant(
    "connection-slot-leak",
    DEEP,
    "wire.sequential-connection",
    `never frees a connection's session slot: from connection ${SESSION_SLOTS + 1} on, connections are accepted and never answered`,
    class extends ReferenceBridge {
      private opened = 0;
      protected override serve(socket: Socket): void {
        if (++this.opened <= SESSION_SLOTS) {
          super.serve(socket);
          return;
        }
        socket.on("data", () => {});
        socket.resume();
      }
    },
  ),
  mutant(
    "id-retry-cache",
    DEEP,
    "wire.response-envelope",
    "answers a request whose id repeats the previous one on the connection from a retry cache, without running it " +
      "(a status with the id of the ping before it gets the ping's reply)",
    class extends ReferenceBridge {
      private readonly last = new WeakMap<Session, { id: string; result: Json }>();
      protected override dispatch(session: Session, request: Request): Json {
        const id = JSON.stringify(request.id);
        const cached = this.last.get(session);
        if (cached?.id === id) return cached.result;
        const result = super.dispatch(session, request);
        this.last.set(session, { id, result });
        return result;
      }
    },
  ),
  mutant(
    "append-chain-completes-once",
    DEEP,
    "integration.command-completion",
    "a command appended to an appended one completes under the commandSeq of the chain's first",
    class extends ReferenceBridge {
      private head?: number;
      private readonly completesAs = new Map<number, number>();
      protected override act(params: JsonObject): Json {
        const result = super.act(params) as { commandSeq: number };
        if (params.append !== true) this.head = undefined;
        else if (this.head === undefined) this.head = result.commandSeq;
        else this.completesAs.set(result.commandSeq, this.head);
        return result;
      }
      protected override execute(command: QueuedCommand): JsonObject {
        const event = super.execute(command);
        const head = this.completesAs.get(command.seq);
        this.completesAs.delete(command.seq);
        return head === undefined ? event : { ...event, commandSeq: head };
      }
    },
  ),
  mutant(
    "utf8-decoded-per-read-buffer",
    DEEP,
    "wire.utf8",
    `decodes a long line one ${READ_BUFFER / 1024} KiB read buffer at a time, so a character across a buffer boundary becomes U+FFFD`,
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        if (line.length <= READ_BUFFER) return super.parse(line);
        let text = "";
        for (let at = 0; at < line.length; at += READ_BUFFER)
          text += line.subarray(at, at + READ_BUFFER).toString("utf8");
        return JSON.parse(text);
      }
    },
  ),
  mutant(
    "commandseq-race",
    DEEP,
    "method.act",
    "reads commandSeq when a request arrives and writes it back at the end of the event-loop turn: acts from two connections in one turn get the same commandSeq",
    class extends ReferenceBridge {
      private staged = false;
      protected override act(params: JsonObject): Json {
        const staged = this.staged;
        if (staged) this.commandSeq--; // the counter as read before the other act of this turn wrote it back
        let result: Json;
        try {
          result = super.act(params);
        } catch (err) {
          if (staged) this.commandSeq++;
          throw err;
        }
        if (!staged) {
          this.staged = true;
          setImmediate(() => {
            this.staged = false;
          });
        }
        return result;
      }
    },
  ),
];
