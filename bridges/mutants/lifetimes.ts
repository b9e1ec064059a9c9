import type { Socket } from "node:net";
import { type Json, ReferenceBridge, type Request, type Session } from "../reference/bridge.js";
import { alsoBreaking, type Mutant, mutant } from "./mutant.js";

// Faults of resource lifetimes and volumes: each bridge serves a fresh session and every single request, and breaks
// only after what many connections leave behind, many lines in one read, or one id used again elsewhere.

const DEEP = "validation.protocol-smoke/deep-states";

/** Read buffers the leaking bridge has: one is lost for each connection closed with part of a line in it. */
const READ_BUFFERS = 12;
/** Complete lines the capped bridge takes from one read; the rest of the read is dropped. */
const LINES_PER_READ = 32;
/** The methods whose replies the caching bridge keeps. */
const QUERIES = ["ping", "status", "observe"];

export const mutants: Mutant[] = [
  mutant(
    "partial-line-buffer-leak",
    DEEP,
    "wire.sequential-connection",
    `never returns the read buffer of a connection closed halfway through a line: after ${READ_BUFFERS} such closes, ` +
      "new connections are accepted and never answered",
    class extends ReferenceBridge {
      private lost = 0;
      protected override serve(socket: Socket): void {
        if (this.lost >= READ_BUFFERS) {
          socket.on("data", () => {});
          socket.resume();
          return;
        }
        let partial = false;
        socket.on("data", (chunk: Buffer) => void (partial = chunk[chunk.length - 1] !== 0x0a));
        socket.on("close", () => void (partial && this.lost++));
        super.serve(socket);
      }
    },
  ),
  mutant(
    "lines-per-read-capped",
    DEEP,
    "wire.ndjson",
    `takes at most ${LINES_PER_READ} complete lines from one read and drops the rest of it (a fixed array of line slots)`,
    class extends ReferenceBridge {
      private readonly taken = new WeakMap<Session, number>();
      protected override handleFrame(session: Session, line: Buffer, terminated: boolean): boolean {
        const taken = this.taken.get(session) ?? 0;
        // The lines of one read are framed in one turn of the event loop; the next read comes in a later one.
        if (taken === 0) setImmediate(() => this.taken.delete(session));
        this.taken.set(session, taken + 1);
        return taken >= LINES_PER_READ || super.handleFrame(session, line, terminated);
      }
    },
  ),
  mutant(
    "query-cache-keyed-by-id",
    DEEP,
    "wire.response-envelope",
    "keeps the last reply to a query (ping, status, observe) of each connection for clients that retry, keyed by its " +
      "id alone: the next request with that id, whatever its method, gets that reply",
    class extends ReferenceBridge {
      private readonly last = new WeakMap<Session, { id: string; result: Json }>();
      protected override dispatch(session: Session, request: Request): Json {
        if (request.method === "auth") return super.dispatch(session, request);
        const id = JSON.stringify(request.id);
        const cached = this.last.get(session);
        if (cached?.id === id) return cached.result;
        const result = super.dispatch(session, request);
        if (QUERIES.includes(request.method)) this.last.set(session, { id, result });
        else this.last.delete(session);
        return result;
      }
    },
  ),
  // Whichever method a new connection asks first with a cached id gets another method's reply: a status asked so
  // is no status, so the fault breaks method.status too, in the order the checks run.
  alsoBreaking(
    mutant(
      "retry-cache-across-connections",
      DEEP,
      "wire.response-envelope",
      "takes a new connection's first request whose id is that of the last reply written (on another connection) for a " +
        "retry after a reconnect, and answers it from that reply, whatever its method",
      class extends ReferenceBridge {
        private last?: { session: Session; id: string; result: Json };
        private readonly started = new WeakSet<Session>();
        protected override dispatch(session: Session, request: Request): Json {
          if (request.method === "auth") return super.dispatch(session, request);
          const id = JSON.stringify(request.id);
          const first = !this.started.has(session);
          this.started.add(session);
          const { last } = this;
          if (first && session.authorized && last && last.session !== session && last.id === id) return last.result;
          const result = super.dispatch(session, request);
          this.last = { session, id, result };
          return result;
        }
      },
    ),
    "method.status",
  ),
];
