import { timingSafeEqual } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { isDeepStrictEqual } from "node:util";
import { contract } from "../../protocol/contract.js";
import { memberJsonText } from "./idText.js";

// A conformant AiControl bridge: the built-in default target, and the base every
// mutant in bridges/mutants/ bends in exactly one place.

export interface BridgeOptions {
  /** Shared token; empty or absent means no authorization is required. */
  token?: string;
  host?: string;
  /** 0 picks an ephemeral port. */
  port?: number;
  maxQueuedCommands?: number;
  maxEvents?: number;
  /** How often the "game loop" completes one queued command. */
  drainIntervalMs?: number;
  /** Serve one connection at a time, holding later ones until it ends (as the public sample does). */
  singleConnection?: boolean;
  maxLineBytes?: number;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };
export interface Request {
  id: Json;
  method: string;
  params: JsonObject;
  /** The id's JSON text as the request wrote it, where it holds a number (see idText). */
  idText?: string;
}
export interface Session {
  authorized: boolean;
  socket: Socket;
}
export interface QueuedCommand {
  seq: number;
  command: JsonObject;
}
export interface RetainedEvent {
  seq: number;
  event: JsonObject;
}

const code = (rule: string) => contract.codes[rule]!;
export const CODES = {
  parse: code("error.parse"),
  invalidRequest: code("error.invalid-request"),
  methodNotFound: code("error.method-not-found"),
  invalidParams: code("error.invalid-params"),
  unauthorized: code("error.unauthorized"),
  queueFull: code("error.queue-full"),
};

/**
 * The most a completion message takes in a reply line, in bytes of its JSON string contents
 * (escapes counted). An echo of a stringArg near the 1 MiB request limit would otherwise make
 * an event no events page could carry within the line limit.
 */
export const MAX_MESSAGE_BYTES = 4096;

/** `text` cut at a character boundary so its JSON form takes at most MAX_MESSAGE_BYTES, marked with "…" when cut. */
export function boundedMessage(text: string): string {
  const jsonBytes = (t: string) => Buffer.byteLength(JSON.stringify(t)) - 2;
  if (jsonBytes(text) <= MAX_MESSAGE_BYTES) return text;
  const budget = MAX_MESSAGE_BYTES - Buffer.byteLength("…");
  let used = 0;
  let end = 0;
  for (const ch of text) {
    const n = jsonBytes(ch);
    if (used + n > budget) break;
    used += n;
    end += ch.length;
  }
  return `${text.slice(0, end)}…`;
}

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

// ignoreBOM keeps a byte order mark in the text, so JSON.parse rejects it as RFC 8259 asks.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const fieldsOf = (kind: string) => contract.commandFields.filter((f) => f.kind === kind).map((f) => f.field);
export const IDENTIFIER_FIELDS = fieldsOf("identifier");
export const INTEGER_FIELDS = fieldsOf("integer");
const STRING_FIELDS = fieldsOf("string");
const BOOLEAN_FIELDS = fieldsOf("boolean");

export class ReferenceBridge {
  readonly options: Required<BridgeOptions>;
  protected server?: Server;
  protected queue: QueuedCommand[] = [];
  protected history: RetainedEvent[] = [];
  protected commandSeq = 0;
  protected eventSeq = 0;
  protected observationSeq = 1;
  protected agent = { x: 0, y: 0 };
  protected lastError = "";
  protected drainTimer?: NodeJS.Timeout;
  /** The JSON text a response's id is written as: its request's own, where it holds a number (see idText). */
  private readonly idTexts = new WeakMap<JsonObject, string>();
  private readonly sockets = new Set<Socket>();
  private readonly waiting: Socket[] = [];
  private active?: Socket;

  constructor(options: BridgeOptions = {}) {
    this.options = {
      token: "",
      host: "127.0.0.1",
      port: 0,
      maxQueuedCommands: 64,
      maxEvents: 512,
      drainIntervalMs: 1,
      singleConnection: false,
      maxLineBytes: contract.limits.maxLineBytes,
      ...options,
    };
    if (!(this.options.maxQueuedCommands > 0 && this.options.maxEvents > 0))
      throw new Error("queue and event limits must be positive");
  }

  get address(): { host: string; port: number } {
    const a = this.server?.address();
    if (!a || typeof a === "string") throw new Error("bridge is not listening");
    return { host: a.address, port: a.port };
  }

  async listen(): Promise<{ host: string; port: number }> {
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port, this.options.host, () => resolve());
    });
    this.startLoop();
    return this.address;
  }

  /** Starts the game loop that completes queued commands, one per drain interval. */
  startLoop(): void {
    clearInterval(this.drainTimer);
    this.drainTimer = setInterval(() => this.drainOne(), this.options.drainIntervalMs);
  }

  async close(): Promise<void> {
    clearInterval(this.drainTimer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  // ---- connections and framing ----

  protected accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => {
      this.sockets.delete(socket);
      if (this.active === socket) this.serveNext();
    });
    socket.on("error", () => {});
    if (this.options.singleConnection && this.active) {
      socket.pause();
      this.waiting.push(socket);
      return;
    }
    this.serve(socket);
  }

  private serveNext(): void {
    this.active = undefined;
    const next = this.waiting.shift();
    if (next && !next.destroyed) this.serve(next);
    else if (next) this.serveNext();
  }

  protected serve(socket: Socket): void {
    this.active = socket;
    socket.setNoDelay(true);
    const session: Session = { authorized: this.options.token === "", socket };
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    socket.on("data", (chunk: Buffer) => {
      let at = chunk.indexOf(0x0a);
      while (at !== -1) {
        const line = Buffer.concat([...pending, chunk.subarray(0, at)]);
        pending = [];
        pendingBytes = 0;
        chunk = chunk.subarray(at + 1);
        if (!this.handleFrame(session, line, true)) return;
        at = chunk.indexOf(0x0a);
      }
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes > this.options.maxLineBytes) this.handleFrame(session, Buffer.concat(pending), false);
    });
    socket.resume();
  }

  /** One line (or, unterminated, one already over the limit); false once the connection is done. */
  protected handleFrame(session: Session, line: Buffer, terminated: boolean): boolean {
    if (line.length > this.options.maxLineBytes) return this.rejectOversized(session, line, terminated);
    const response = this.handleLine(session, line);
    if (response) this.send(session, response);
    return true;
  }

  /** Never buffers past the limit: answer invalid request and close. */
  protected rejectOversized(session: Session, _line: Buffer, _terminated: boolean): boolean {
    this.send(session, this.errorResponse(null, CODES.invalidRequest, "Request too large"));
    this.hangUp(session.socket);
    return false;
  }

  /**
   * Closes gracefully: our FIN first, then discard what the peer still sends, so no reset destroys
   * the last response.
   */
  protected hangUp(socket: Socket): void {
    socket.removeAllListeners("data");
    socket.on("data", () => {});
    socket.end();
    setTimeout(() => socket.destroy(), 2000).unref();
  }

  protected send(session: Session, response: JsonObject): void {
    if (!session.socket.writable) return;
    session.socket.write(`${this.line(response, this.idTexts.get(response))}\n`);
  }

  /**
   * A response's line (without LF). Where `idText` is given and still denotes the response's id, the id is written
   * as that text, so a number keeps every digit the request gave it.
   */
  protected line(response: JsonObject, idText?: string): string {
    if (idText === undefined || !denotes(idText, response.id)) return JSON.stringify(response);
    const members = Object.entries(response)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${JSON.stringify(key)}:${key === "id" ? idText : JSON.stringify(value)}`);
    return `{${members.join(",")}}`;
  }

  // ---- requests ----

  /** Strict UTF-8, then RFC 8259 JSON; throws on either fault. */
  protected parse(line: Buffer): unknown {
    return JSON.parse(strictUtf8.decode(line));
  }

  protected handleLine(session: Session, line: Buffer): JsonObject | undefined {
    let parsed: unknown;
    try {
      parsed = this.parse(line);
    } catch {
      return this.errorResponse(null, CODES.parse, "Parse error");
    }
    const idText = this.idText(line, parsed);
    const answer = (response: JsonObject) => {
      if (idText !== undefined) this.idTexts.set(response, idText);
      return response;
    };
    const request = this.validateEnvelope(parsed);
    if (request instanceof RpcError) {
      const id = isObject(parsed) && "id" in parsed ? (parsed.id as Json) : null;
      return answer(this.errorResponse(id, request.code, request.message));
    }
    if (idText !== undefined) request.idText = idText;
    try {
      return answer(this.resultResponse(request.id, this.dispatch(session, request)));
    } catch (err) {
      if (err instanceof RpcError) return answer(this.errorResponse(request.id, err.code, err.message));
      throw err;
    }
  }

  /**
   * The id's JSON text as the request wrote it, where the id holds a number: echoed as is, it is the same number
   * however many digits it has. Strings, booleans and null read back exactly, so they need none.
   */
  protected idText(line: Buffer, parsed: unknown): string | undefined {
    if (!isObject(parsed)) return undefined;
    const { id } = parsed;
    if (typeof id !== "number" && (typeof id !== "object" || id === null)) return undefined;
    return memberJsonText(line.toString("utf8"), "id");
  }

  protected validateEnvelope(value: unknown): Request | RpcError {
    if (!isObject(value)) return new RpcError(CODES.invalidRequest, "Invalid request: not an object");
    const { jsonrpc, id, method, params } = value;
    if (jsonrpc !== contract.jsonrpc)
      return new RpcError(CODES.invalidRequest, 'Invalid request: jsonrpc must be "2.0"');
    if (!("id" in value)) return new RpcError(CODES.invalidRequest, "Invalid request: id is missing");
    if (typeof method !== "string" || method === "")
      return new RpcError(CODES.invalidRequest, "Invalid request: method must be a non-empty string");
    if (!isObject(params)) return new RpcError(CODES.invalidRequest, "Invalid request: params must be an object");
    return { id: id as Json, method, params: params as JsonObject };
  }

  protected dispatch(session: Session, request: Request): Json {
    const { method, params } = request;
    if (method === "auth") return this.auth(session, params);
    if (!session.authorized) throw new RpcError(CODES.unauthorized, "Unauthorized");
    switch (method) {
      case "ping":
        return this.ping();
      case "status":
        return this.status();
      case "observe":
        return this.observe();
      case "events":
        return this.events(params, request.id, request.idText);
      case "act":
        return this.act(params);
      default:
        throw new RpcError(CODES.methodNotFound, "Method not found");
    }
  }

  protected auth(session: Session, params: JsonObject): Json {
    const token = params.token;
    if (token !== undefined && typeof token !== "string")
      throw new RpcError(CODES.invalidParams, "Invalid params: token must be a string");
    session.authorized =
      this.options.token === "" || (typeof token === "string" && sameSecret(token, this.options.token));
    return { authorized: session.authorized };
  }

  protected ping(): Json {
    return { ok: true };
  }

  protected status(): Json {
    return {
      running: true,
      host: this.address.host,
      port: this.address.port,
      queuedCommands: this.queue.length,
      maxQueuedCommands: this.options.maxQueuedCommands,
      events: this.history.length,
      maxEvents: this.options.maxEvents,
      observationSeq: this.observationSeq,
      lastError: this.lastError,
    };
  }

  protected observe(): Json {
    return {
      observationSeq: this.observationSeq,
      observation: {
        schemaVersion: 1,
        ready: true,
        agent: { ...this.agent },
        availableActions: ["echo", "move", "fail"],
      },
    };
  }

  /**
   * The first retained events after the cursor, ascending, at most the clamped limit: and no more
   * than fit in one reply line. A page stops before the event that would take the serialized
   * response (this request's id included) past maxLineBytes; a client pages on with the cursor,
   * so it misses nothing. Completion messages are bounded (see boundedMessage), so every event
   * fits on a page of its own unless the request's id alone nearly fills a line.
   */
  protected events(params: JsonObject, id: Json = null, idText?: string): Json {
    const afterSeq = params.afterSeq ?? 0;
    const limit = params.limit ?? 100;
    if (!Number.isSafeInteger(afterSeq) || !Number.isSafeInteger(limit))
      throw new RpcError(CODES.invalidParams, "Invalid params: afterSeq and limit must be integers");
    const { eventsLimitMin, eventsLimitMax } = contract.limits;
    const clamped = Math.min(Math.max(limit as number, eventsLimitMin), eventsLimitMax);
    const latestSeq = this.eventSeq;
    let bytes = Buffer.byteLength(this.line(this.resultResponse(id, { latestSeq, events: [] }), idText));
    const page: RetainedEvent[] = [];
    for (const entry of this.history) {
      if (entry.seq <= (afterSeq as number)) continue;
      if (page.length === clamped) break;
      bytes += Buffer.byteLength(JSON.stringify(entry)) + (page.length ? 1 : 0); // the comma between entries
      if (bytes > this.options.maxLineBytes) break;
      page.push(entry);
    }
    return { latestSeq, events: page as unknown as Json };
  }

  protected act(params: JsonObject): Json {
    const problem = this.commandProblem(params);
    if (problem) throw new RpcError(CODES.invalidParams, `Invalid params: ${problem}`);
    if (this.queue.length >= this.options.maxQueuedCommands) throw new RpcError(CODES.queueFull, "Command queue full");
    const seq = ++this.commandSeq;
    this.queue.push({ seq, command: params });
    return { accepted: true, commandSeq: seq };
  }

  /** Why a command is ill-typed, or undefined. */
  protected commandProblem(command: JsonObject): string | undefined {
    if (typeof command.type !== "string" || command.type === "") return "type must be a non-empty string";
    for (const key of IDENTIFIER_FIELDS) {
      const v = command[key];
      if (v !== undefined && typeof v !== "string" && !Number.isSafeInteger(v))
        return `${key} must be an identifier (a string or an integer)`;
    }
    for (const key of INTEGER_FIELDS) {
      if (command[key] !== undefined && !Number.isSafeInteger(command[key])) return `${key} must be an integer`;
    }
    for (const key of STRING_FIELDS) {
      if (command[key] !== undefined && typeof command[key] !== "string") return `${key} must be a string`;
    }
    for (const key of BOOLEAN_FIELDS) {
      if (command[key] !== undefined && typeof command[key] !== "boolean") return `${key} must be a boolean`;
    }
    return undefined;
  }

  // ---- the game loop ----

  protected drainOne(): void {
    const next = this.queue.shift();
    if (!next) return;
    this.recordEvent(this.execute(next));
  }

  /** Runs a command and says how it went; unknown types complete as failures. */
  protected execute({ seq, command }: QueuedCommand): JsonObject {
    let success = true;
    let message = "completed";
    switch (command.type) {
      case "move":
        this.agent = { x: (command.x as number) ?? this.agent.x, y: (command.y as number) ?? this.agent.y };
        this.observationSeq++;
        message = "moved";
        break;
      case "echo":
        message = boundedMessage(typeof command.stringArg === "string" ? command.stringArg : "");
        break;
      case "fail":
        success = false;
        message = "failed as asked";
        break;
      default:
        success = false;
        message = "unknown command type";
    }
    return { type: "command_completed", commandSeq: seq, success, message };
  }

  protected recordEvent(event: JsonObject): void {
    this.history.push({ seq: ++this.eventSeq, event });
    while (this.history.length > this.options.maxEvents) this.history.shift();
  }

  protected resultResponse(id: Json, result: Json): JsonObject {
    return { jsonrpc: contract.jsonrpc, id, result };
  }

  protected errorResponse(id: Json, code: number, message: string): JsonObject {
    return { jsonrpc: contract.jsonrpc, id, error: { code, message } };
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether the JSON text `text` reads as `value`. */
function denotes(text: string, value: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(text), value);
  } catch {
    return false;
  }
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
