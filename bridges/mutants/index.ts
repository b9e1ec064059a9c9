import { contract } from "../../protocol/contract.js";
import {
  type BridgeOptions,
  CODES,
  INTEGER_FIELDS,
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
import { mutants as health } from "./health.js";
import { alsoBreaking, FILLABLE, type Mutant, mutant } from "./mutant.js";
import { mutants as oracles } from "./oracles.js";
import { mutants as replies } from "./replies.js";
import { mutants as sessions } from "./sessions.js";

export type { Mutant };

const lenientDecoder = new TextDecoder("utf-8");

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
  mutant(
    "segment-per-request",
    "wire.tcp-stream/split-writes",
    "wire.tcp-stream",
    "treats every TCP segment as a whole request",
    class extends ReferenceBridge {
      protected override serve(socket: import("node:net").Socket): void {
        const session: Session = { authorized: this.options.token === "", socket };
        socket.on("data", (chunk: Buffer) => {
          for (const line of chunk.toString("latin1").split("\n").filter(Boolean))
            this.handleFrame(session, Buffer.from(line, "latin1"), true);
        });
        socket.resume();
      }
    },
  ),
  mutant(
    "pretty-printed",
    "wire.ndjson/sequence-in-order",
    "wire.ndjson",
    "writes responses as indented multi-line JSON",
    class extends ReferenceBridge {
      protected override send(session: Session, response: JsonObject): void {
        if (session.socket.writable) session.socket.write(`${JSON.stringify(response, null, 2)}\n`);
      }
    },
  ),
  mutant(
    "latin1-responses",
    "wire.utf8/unicode-text",
    "wire.utf8",
    "encodes responses as Latin-1",
    class extends ReferenceBridge {
      protected override send(session: Session, response: JsonObject): void {
        if (session.socket.writable) session.socket.write(Buffer.from(`${JSON.stringify(response)}\n`, "latin1"));
      }
    },
  ),
  mutant(
    "lenient-utf8",
    "wire.utf8/malformed",
    "wire.utf8",
    "decodes malformed UTF-8 with replacement characters instead of rejecting it",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        return JSON.parse(lenientDecoder.decode(line));
      }
    },
  ),
  mutant(
    "dies-on-malformed-utf8",
    "wire.utf8/malformed",
    "wire.utf8",
    "stops listening after malformed UTF-8",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        try {
          return super.parse(line);
        } catch (err) {
          if (lenientDecoder.decode(line).includes("\ufffd")) void this.close();
          throw err;
        }
      }
    },
  ),
  mutant(
    "no-line-limit",
    "wire.line-limit/over-limit",
    "wire.line-limit",
    "accepts lines of any length",
    class extends ReferenceBridge {
      constructor(options: BridgeOptions = {}) {
        super({ ...options, maxLineBytes: Number.MAX_SAFE_INTEGER });
      }
    },
  ),
  mutant(
    "limit-off-by-one",
    "wire.line-limit/exact-limit",
    "wire.line-limit",
    "rejects a payload of exactly 1 MiB",
    class extends ReferenceBridge {
      constructor(options: BridgeOptions = {}) {
        super({ ...options, maxLineBytes: contract.limits.maxLineBytes - 1 });
      }
    },
  ),
  mutant(
    "runs-oversized-tail",
    "wire.line-limit/over-limit",
    "wire.line-limit",
    "rejects the first 1 MiB of an oversized line, then runs the rest as a request",
    class extends ReferenceBridge {
      protected override rejectOversized(session: Session, line: Buffer, terminated: boolean): boolean {
        if (!terminated) return true; // keep buffering until the LF
        this.send(session, this.errorResponse(null, CODES.invalidRequest, "Request too large"));
        return this.handleFrame(session, line.subarray(this.options.maxLineBytes), true);
      }
    },
  ),
  mutant(
    "lenient-envelope",
    "wire.request-envelope/bad-envelope",
    "wire.request-envelope",
    "ignores jsonrpc and takes params of any type",
    class extends ReferenceBridge {
      protected override validateEnvelope(value: unknown) {
        if (typeof value === "object" && value !== null && !Array.isArray(value)) {
          const v = value as Record<string, unknown>;
          return super.validateEnvelope({
            ...v,
            jsonrpc: contract.jsonrpc,
            params: typeof v.params === "object" && v.params !== null && !Array.isArray(v.params) ? v.params : {},
          });
        }
        return super.validateEnvelope(value);
      }
    },
  ),
  mutant(
    "id-as-string",
    "wire.response-envelope/echo-id",
    "wire.response-envelope",
    "echoes the request id as a string",
    class extends ReferenceBridge {
      protected override resultResponse(id: Json, result: Json): JsonObject {
        return super.resultResponse(typeof id === "string" ? id : JSON.stringify(id), result);
      }
    },
  ),
  mutant(
    "lenient-json",
    "error.parse/non-json",
    "error.parse",
    "parses NaN, comments and trailing commas",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        try {
          return super.parse(line);
        } catch {
          const text = line
            .toString("utf8")
            .replace(/\/\*.*?\*\//g, "")
            .replace(/,\s*([}\]])/g, "$1")
            .replace(/-?\b(NaN|Infinity)\b/g, "null");
          return JSON.parse(text);
        }
      }
    },
  ),
  mutant(
    "accepts-nan-only",
    "error.parse/non-json",
    "error.parse",
    "takes NaN where a value stands (as null) but refuses -NaN, Infinity and -Infinity: one value of the four a " +
      "lenient parser may take",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        try {
          return super.parse(line);
        } catch (err) {
          const text = line.toString("utf8");
          if (!/[:[,]NaN[,}\]]/.test(text)) throw err;
          return JSON.parse(text.replace(/([:[,])NaN(?=[,}\]])/g, "$1null"));
        }
      }
    },
  ),
  mutant(
    "parse-error-as-invalid-request",
    "error.parse/non-json",
    "error.parse",
    "answers malformed JSON with -32600",
    class extends ReferenceBridge {
      protected override handleLine(session: Session, line: Buffer): JsonObject | undefined {
        const response = super.handleLine(session, line);
        const error = response?.error as { code?: number } | undefined;
        if (error?.code === CODES.parse) error.code = CODES.invalidRequest;
        return response;
      }
    },
  ),
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
  mutant(
    "reorders-pipelined",
    "wire.ndjson/pipelined",
    "wire.ndjson",
    "answers the lines of one TCP read last first",
    class extends ReferenceBridge {
      protected override serve(socket: import("node:net").Socket): void {
        const session: Session = { authorized: this.options.token === "", socket };
        socket.on("data", (chunk: Buffer) => {
          const lines = chunk.toString("latin1").split("\n").slice(0, -1).reverse();
          for (const line of lines) this.handleFrame(session, Buffer.from(line, "latin1"), true);
        });
        socket.resume();
      }
    },
  ),
  mutant(
    "blank-line-invalid-request",
    "wire.ndjson/blank-line",
    "wire.ndjson",
    "answers an empty line with -32600",
    class extends ReferenceBridge {
      protected override handleLine(session: Session, line: Buffer): JsonObject | undefined {
        return line.length === 0
          ? this.errorResponse(null, CODES.invalidRequest, "Invalid request")
          : super.handleLine(session, line);
      }
    },
  ),
  mutant(
    "buffers-unterminated-lines",
    "wire.line-limit/endless-line",
    "wire.line-limit",
    "enforces the limit only once the LF arrives, buffering until then",
    class extends ReferenceBridge {
      protected override rejectOversized(session: Session, line: Buffer, terminated: boolean): boolean {
        return terminated ? super.rejectOversized(session, line, terminated) : true;
      }
    },
  ),
  mutant(
    "stops-after-five-connections",
    "wire.sequential-connection/reconnect",
    "wire.sequential-connection",
    "leaks its handler, so after five connections it answers no more",
    class extends ReferenceBridge {
      private served = 0;
      protected override serve(socket: import("node:net").Socket): void {
        if (++this.served > 5) return void socket.pause();
        super.serve(socket);
      }
    },
  ),
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
  // One per optional field: accepts it ill-typed, then drops the command without completing it.
  ...contract.commandFields.map(({ field, rule }) =>
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
  ),
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
];
