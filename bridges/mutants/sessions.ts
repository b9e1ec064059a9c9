import {
  type BridgeOptions,
  type Json,
  type JsonObject,
  ReferenceBridge,
  type Request,
  type Session,
} from "../reference/bridge.js";
import { type Mutant, mutant } from "./mutant.js";

// Mutants for authorization near misses and for state that must outlive a connection (sequences)
// or must not (authorization).

const NEAR_MISS = "method.auth/near-miss";
const AFTER_RECONNECT = "error.unauthorized/after-reconnect";
const ACT_ACROSS = "method.act/across-connections";
const OBSERVE_ACROSS = "method.observe/across-connections";

/** A bridge whose token compare also accepts what `lenient` accepts (answering {authorized:true}). */
const lenientCompare = (name: string, description: string, lenient: (given: string, token: string) => boolean) =>
  mutant(
    name,
    NEAR_MISS,
    "method.auth",
    description,
    class extends ReferenceBridge {
      protected override auth(session: Session, params: JsonObject): Json {
        const given = params.token;
        if (this.options.token !== "" && typeof given === "string" && lenient(given, this.options.token)) {
          session.authorized = true;
          return { authorized: true };
        }
        return super.auth(session, params);
      }
    },
  );

/** Per connection: the value a bridge-wide counter had when the connection started (its first request). */
class PerConnection {
  private readonly bases = new WeakMap<Session, number>();
  base(session: Session, now: number): number {
    if (!this.bases.has(session)) this.bases.set(session, now);
    return this.bases.get(session)!;
  }
}

export const mutants: Mutant[] = [
  lenientCompare(
    "auth-prefix-compare",
    "compares only as many characters as were sent, so any non-empty prefix of the token authorizes",
    (given, token) => given !== "" && token.startsWith(given),
  ),
  lenientCompare(
    "auth-token-length-compare",
    "compares only the token's length of what was sent, so the token with anything after it authorizes",
    (given, token) => given.startsWith(token),
  ),
  lenientCompare(
    "auth-case-insensitive",
    "compares the token case-insensitively",
    (given, token) => given.toLowerCase() === token.toLowerCase(),
  ),
  lenientCompare(
    "auth-trims-token",
    "trims whitespace around the sent token before comparing",
    (given, token) => given.trim() === token,
  ),
  lenientCompare(
    "auth-empty-token-accepted",
    "an empty token authorizes (taken as no token required)",
    (given) => given === "",
  ),
  lenientCompare(
    "auth-nul-terminated",
    "compares the sent token as a C string, up to its first NUL",
    (given, token) => given.split("\u0000")[0] === token,
  ),
  mutant(
    "auth-coerces-token",
    NEAR_MISS,
    "method.auth",
    "turns whatever token was sent into a string before comparing, so an array holding the token authorizes",
    class extends ReferenceBridge {
      protected override auth(session: Session, params: JsonObject): Json {
        const token = params.token;
        return super.auth(session, token === undefined ? params : { ...params, token: String(token) });
      }
    },
  ),
  mutant(
    "auth-refuses-yet-authorizes",
    NEAR_MISS,
    "method.auth",
    "answers {authorized:false} to the token in another case, yet authorizes the connection",
    class extends ReferenceBridge {
      protected override auth(session: Session, params: JsonObject): Json {
        const result = super.auth(session, params);
        const given = params.token;
        if (typeof given === "string" && given.toLowerCase() === this.options.token.toLowerCase())
          session.authorized = true;
        return result;
      }
    },
  ),
  mutant(
    "auth-remembered-by-address",
    AFTER_RECONNECT,
    "error.unauthorized",
    "serving one connection at a time, it remembers the address of every authorized client and lets later " +
      "connections from there in without auth",
    class extends ReferenceBridge {
      private readonly trusted = new Set<string>();
      constructor(options: BridgeOptions = {}) {
        super({ ...options, singleConnection: true });
      }
      protected override dispatch(session: Session, request: Request): Json {
        const address = session.socket.remoteAddress ?? "";
        if (this.trusted.has(address)) session.authorized = true;
        const result = super.dispatch(session, request);
        if (session.authorized) this.trusted.add(address);
        return result;
      }
    },
  ),
  mutant(
    "auth-held-by-bridge",
    AFTER_RECONNECT,
    "error.unauthorized",
    "serving one connection at a time, it keeps authorization in one bridge-wide flag that the next " +
      "connection inherits",
    class extends ReferenceBridge {
      private authorized = false;
      constructor(options: BridgeOptions = {}) {
        super({ ...options, singleConnection: true });
      }
      protected override dispatch(session: Session, request: Request): Json {
        session.authorized ||= this.authorized;
        try {
          return super.dispatch(session, request);
        } finally {
          this.authorized = session.authorized;
        }
      }
    },
  ),
  mutant(
    "command-seq-per-connection",
    ACT_ACROSS,
    "method.act",
    "counts commandSeq per connection, from 1 again on every new one",
    class extends ReferenceBridge {
      private readonly counters = new WeakMap<Session, number>();
      protected override dispatch(session: Session, request: Request): Json {
        if (request.method !== "act") return super.dispatch(session, request);
        this.commandSeq = this.counters.get(session) ?? 0;
        try {
          return super.dispatch(session, request);
        } finally {
          this.counters.set(session, this.commandSeq);
        }
      }
    },
  ),
  mutant(
    "event-seq-per-connection",
    ACT_ACROSS,
    "method.events",
    "numbers events per connection: seqs and latestSeq count from where the history stood when it connected",
    class extends ReferenceBridge {
      private readonly connected = new PerConnection();
      protected override dispatch(session: Session, request: Request): Json {
        const base = this.connected.base(session, this.eventSeq);
        if (request.method !== "events") return super.dispatch(session, request);
        const { afterSeq } = request.params;
        const shifted =
          typeof afterSeq === "number" ? { ...request.params, afterSeq: afterSeq + base } : request.params;
        const r = super.dispatch(session, { ...request, params: shifted }) as {
          latestSeq: number;
          events: { seq: number; event: JsonObject }[];
        };
        return {
          latestSeq: r.latestSeq - base,
          events: r.events.map((e) => ({ seq: e.seq - base, event: e.event })),
        } as unknown as Json;
      }
    },
  ),
  mutant(
    "observation-seq-per-connection",
    OBSERVE_ACROSS,
    "method.observe",
    "numbers observations per connection, from 1 again on every new one",
    class extends ReferenceBridge {
      private readonly connected = new PerConnection();
      protected override dispatch(session: Session, request: Request): Json {
        const base = this.connected.base(session, this.observationSeq);
        const result = super.dispatch(session, request);
        if (request.method !== "observe") return result;
        const r = result as { observationSeq: number };
        return { ...r, observationSeq: r.observationSeq - base + 1 } as unknown as Json;
      }
    },
  ),
];
