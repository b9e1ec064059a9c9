import { contract } from "../../protocol/contract.js";
import {
  CODES,
  type Json,
  type JsonObject,
  ReferenceBridge,
  type Request,
  RpcError,
  type Session,
} from "../reference/bridge.js";
import { mutants as bytes } from "./bytes.js";
import { mutants as deep } from "./deep.js";
import { mutants as events } from "./events.js";
import { framing, streams } from "./framing.js";
import { mutants as health } from "./health.js";
import { completions, silentOnIllTyped } from "./illTyped.js";
import { mutants as lifetimes } from "./lifetimes.js";
import { alsoBreaking, FILLABLE, type Mutant, mutant } from "./mutant.js";
import { mutants as oracles } from "./oracles.js";
import { mutants as replies } from "./replies.js";
import { mutants as sessions } from "./sessions.js";

export type { Mutant };

const basics: Mutant[] = [
  mutant(
    "ping-not-ok",
    "method.ping/ok",
    "method.ping",
    'ping answers {ok:"yes"}',
    class extends ReferenceBridge {
      protected override ping(): Json {
        return { ok: "yes" };
      }
    },
  ),
  mutant(
    "unknown-method-invalid-request",
    "error.method-not-found/unknown-method",
    "error.method-not-found",
    "an unknown method gets -32600 instead of -32601",
    class extends ReferenceBridge {
      protected override dispatch(session: Session, request: Request): Json {
        try {
          return super.dispatch(session, request);
        } catch (err) {
          throw err instanceof RpcError && err.code === CODES.methodNotFound
            ? new RpcError(CODES.invalidRequest, "Invalid request")
            : err;
        }
      }
    },
  ),
  mutant(
    "no-auth-check",
    "error.unauthorized/before-auth",
    "error.unauthorized",
    "serves every method before auth",
    class extends ReferenceBridge {
      protected override dispatch(session: Session, request: Request): Json {
        session.authorized = true;
        return super.dispatch(session, request);
      }
    },
  ),
  mutant(
    "silent-before-auth",
    "error.unauthorized/before-auth",
    "error.unauthorized",
    "answers nothing but auth before auth, where the contract asks for the unauthorized error",
    class extends ReferenceBridge {
      protected override handleLine(session: Session, line: Buffer): JsonObject | undefined {
        const reply = super.handleLine(session, line);
        return (reply?.error as { code?: unknown } | undefined)?.code === CODES.unauthorized ? undefined : reply;
      }
    },
  ),
  mutant(
    "wrong-token-error",
    "method.auth/wrong-then-right",
    "method.auth",
    "a wrong token is answered with an error instead of {authorized:false}",
    class extends ReferenceBridge {
      protected override auth(session: Session, params: JsonObject): Json {
        const result = super.auth(session, params) as { authorized: boolean };
        if (!result.authorized) throw new RpcError(CODES.unauthorized, "Bad token");
        return result;
      }
    },
  ),
  mutant(
    "locked-after-wrong-token",
    "method.auth/wrong-then-right",
    "method.auth",
    "after one wrong token the connection can never authorize",
    class extends ReferenceBridge {
      private readonly locked = new WeakSet<Session>();
      protected override auth(session: Session, params: JsonObject): Json {
        const result = super.auth(session, params) as { authorized: boolean };
        if (!result.authorized) this.locked.add(session);
        if (this.locked.has(session)) session.authorized = false;
        return { authorized: session.authorized };
      }
    },
  ),
  mutant(
    "shared-auth",
    "method.auth/per-connection",
    "error.unauthorized",
    "authorization carries over to every later connection",
    class extends ReferenceBridge {
      private anyAuthorized = false;
      protected override dispatch(session: Session, request: Request): Json {
        if (this.anyAuthorized) session.authorized = true;
        const result = super.dispatch(session, request);
        if (session.authorized) this.anyAuthorized = true;
        return result;
      }
    },
  ),
  ...framing,
  alsoBreaking(
    mutant(
      "act-without-type",
      "error.invalid-params/act-type",
      "error.invalid-params",
      "accepts act without a command type",
      class extends ReferenceBridge {
        protected override commandProblem(command: JsonObject): string | undefined {
          return super.commandProblem({
            ...command,
            type: typeof command.type === "string" && command.type ? command.type : "untyped",
          });
        }
      },
    ),
    "command.type",
  ),
  mutant(
    "invalid-params-as-invalid-request",
    "error.invalid-params/act-type",
    "error.invalid-params",
    "answers every invalid params error with -32600",
    class extends ReferenceBridge {
      protected override errorResponse(id: Json, code: number, message: string): JsonObject {
        return super.errorResponse(id, code === CODES.invalidParams ? CODES.invalidRequest : code, message);
      }
    },
  ),
  mutant(
    "status-missing-field",
    "method.status/shape",
    "method.status",
    "status leaves out lastError",
    class extends ReferenceBridge {
      protected override status(): Json {
        const { lastError: _, ...rest } = super.status() as JsonObject;
        return rest;
      }
    },
  ),
  mutant(
    "observe-seq-decreasing",
    "method.observe/sequence",
    "method.observe",
    "observationSeq counts down on every observe",
    class extends ReferenceBridge {
      private countdown = 1000;
      protected override observe(): Json {
        return { ...(super.observe() as JsonObject), observationSeq: this.countdown-- };
      }
    },
  ),
  mutant(
    "no-schema-version",
    "integration.observation-schema/schema-version",
    "integration.observation-schema",
    "the observation has no schemaVersion",
    class extends ReferenceBridge {
      protected override observe(): Json {
        const r = super.observe() as { observation: JsonObject };
        delete r.observation.schemaVersion;
        return r as unknown as Json;
      }
    },
    "warn",
  ),
  mutant(
    "inclusive-cursor",
    "method.events/cursor-and-limit",
    "method.events",
    "events returns seq >= afterSeq (an inclusive cursor)",
    class extends ReferenceBridge {
      protected override events(params: JsonObject): Json {
        const afterSeq = typeof params.afterSeq === "number" ? params.afterSeq - 1 : params.afterSeq;
        return super.events({ ...params, ...(afterSeq === undefined ? {} : { afterSeq }) });
      }
    },
  ),
  mutant(
    "limit-unclamped",
    "method.events/cursor-and-limit",
    "method.events",
    "a limit below 1 returns no events instead of clamping to 1",
    class extends ReferenceBridge {
      protected override events(params: JsonObject): Json {
        const r = super.events(params) as { latestSeq: number; events: Json[] };
        return typeof params.limit === "number" && params.limit < 1 ? { ...r, events: [] } : (r as unknown as Json);
      }
    },
  ),
  mutant(
    "unbounded-history",
    "method.events/history-bound",
    "integration.bounded-state",
    "never drops old events, whatever maxEvents says",
    class extends ReferenceBridge {
      protected override recordEvent(event: JsonObject): void {
        this.history.push({ seq: ++this.eventSeq, event });
      }
    },
  ),
  // Accepting an act into a full queue is also the missing queue-full rejection (-32002).
  alsoBreaking(
    mutant(
      "drops-oldest-when-full",
      "error.queue-full/flood",
      "integration.bounded-state",
      "a full queue drops its oldest command instead of rejecting",
      class extends ReferenceBridge {
        protected override act(params: JsonObject): Json {
          if (this.queue.length >= this.options.maxQueuedCommands) this.queue.shift();
          return super.act(params);
        }
      },
      "fail",
      FILLABLE,
    ),
    "error.queue-full",
  ),
  mutant(
    "act-seq-constant",
    "method.act/accept-and-complete",
    "method.act",
    "act always answers commandSeq 1",
    class extends ReferenceBridge {
      protected override act(params: JsonObject): Json {
        return { ...(super.act(params) as JsonObject), commandSeq: 1 };
      }
    },
  ),
  mutant(
    "silent-unknown-types",
    "method.act/accept-and-complete",
    "integration.command-completion",
    "commands of types it does not advertise never complete",
    class extends ReferenceBridge {
      protected override drainOne(): void {
        const next = this.queue[0];
        if (next && !["echo", "move", "fail"].includes(next.command.type as string)) {
          this.queue.shift();
          return;
        }
        super.drainOne();
      }
    },
  ),
  ...completions,
  ...streams,
  alsoBreaking(
    mutant(
      "events-lenient-params",
      "error.invalid-params/events-cursor",
      "error.invalid-params",
      "reads afterSeq and limit with Number(), never rejecting them",
      class extends ReferenceBridge {
        protected override events(params: JsonObject): Json {
          const n = (v: Json | undefined, d: number) => (v === undefined ? d : Math.trunc(Number(v)) || 0);
          return super.events({ afterSeq: n(params.afterSeq, 0), limit: n(params.limit, 100) });
        }
      },
    ),
    "method.events",
  ),
  mutant(
    "unknown-method-before-auth-invalid",
    "error.unauthorized/precedence",
    "error.unauthorized",
    "answers an unknown method before auth with -32600",
    class extends ReferenceBridge {
      protected override dispatch(session: Session, request: Request): Json {
        if (!session.authorized && !["auth", "ping", "status", "observe", "events", "act"].includes(request.method))
          throw new RpcError(CODES.invalidRequest, "Invalid request");
        return super.dispatch(session, request);
      }
    },
  ),
  mutant(
    "unknown-method-before-auth-not-found",
    "error.unauthorized/before-auth",
    "error.unauthorized",
    "answers an unknown method before auth with -32601, as if the method were looked up first",
    class extends ReferenceBridge {
      protected override dispatch(session: Session, request: Request): Json {
        if (!session.authorized && !contract.methods.includes(request.method))
          throw new RpcError(CODES.methodNotFound, "Method not found");
        return super.dispatch(session, request);
      }
    },
  ),
  mutant(
    "status-revokes-auth",
    "validation.protocol-smoke/stateful",
    "validation.protocol-smoke",
    "a status call quietly unauthorizes the connection",
    class extends ReferenceBridge {
      protected override dispatch(session: Session, request: Request): Json {
        const result = super.dispatch(session, request);
        if (request.method === "status" && this.options.token) session.authorized = false;
        return result;
      }
    },
  ),
  ...silentOnIllTyped,
];

/** Every mutant; each names the check that must catch it. */
export const mutants: Mutant[] = [
  ...basics,
  ...bytes,
  ...oracles,
  ...events,
  ...sessions,
  ...replies,
  ...health,
  ...deep,
  ...lifetimes,
];
