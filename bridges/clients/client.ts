// The reference AiControl client itself: one request, one response, judged strictly. It refuses an
// invalid timeout and a non-loopback host before connecting, bounds the whole request with one
// deadline, and rejects every reply that is not exactly one valid response to its request. Its
// command line is reference.ts; the deliberately broken clients (mutants.ts) extend it.
import { readFileSync } from "node:fs";
import { connect } from "node:net";

// The contract's facts, read from the upstream JSON itself: the client starts once per call, and
// the full contract loader (with its schema validation and overlay) would triple its start-up time.
interface Facts {
  jsonrpc: string;
  maxLineBytes: number;
  host: string;
  port: number;
}
const upstream = JSON.parse(
  readFileSync(new URL("../../protocol/AiControlProtocol.json", import.meta.url), "utf8"),
) as {
  outputs: { jsonrpc_version: string; max_line_bytes: number; default_host: string; default_port: number };
};
export const FACTS: Facts = {
  jsonrpc: upstream.outputs.jsonrpc_version,
  maxLineBytes: upstream.outputs.max_line_bytes,
  host: upstream.outputs.default_host,
  port: upstream.outputs.default_port,
};

export type Outcome =
  | { kind: "result"; result: unknown }
  | { kind: "remote-error"; error: { code: number; message: string; data?: unknown } }
  | { kind: "rejected"; reason: string };

/** Bad usage, found before any connection. */
export class UsageError extends Error {}

export interface CallArgs {
  host: string;
  port: number;
  /** The timeout as given, in seconds. */
  timeout: string;
  method: string;
  params: Record<string, unknown>;
  /** The operator's explicit opt-in to a non-loopback host. */
  allowRemote?: boolean;
  /** Sent in `auth` before the request on every connection, where given (read from an environment variable). */
  token?: string;
  /** Reconnections after a connection ended without a reply (default 0). */
  retries?: number;
  /** For `events`: read page after page, each from the last seq of the one before, until caught up. */
  follow?: boolean;
}

const rejected = (reason: string): Outcome => ({ kind: "rejected", reason });
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const has = (o: object, key: string) => Object.hasOwn(o, key);
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const DECIMAL = /^\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
const MAX_TIMER_MS = 2 ** 31 - 1;
/** A pause before trying again (a new connection, or a request sent again), so a peer is not met with a storm. */
const RETRY_PAUSE_MS = 50;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class ReferenceClient {
  constructor(readonly facts: Facts = FACTS) {}

  /** A finite positive number of seconds, or a UsageError before any connection. */
  protected parseTimeout(text: string): number {
    const seconds = DECIMAL.test(text) ? Number(text) : Number.NaN;
    if (!Number.isFinite(seconds) || seconds <= 0)
      throw new UsageError(`the timeout must be a finite positive number of seconds, not "${text}"`);
    return seconds;
  }

  /** Loopback only, unless the operator opted in. */
  protected checkHost(host: string, allowRemote: boolean): void {
    const loopback = LOOPBACK_V4.test(host) || host === "::1" || host === "localhost";
    if (!loopback && !allowRemote)
      throw new UsageError(`${host} is not a loopback address; connecting to it needs an explicit --allow-remote`);
  }

  /** The request line: one JSON object and LF. */
  protected encodeRequest(id: number, method: string, params: Record<string, unknown>): Buffer {
    return Buffer.from(`${JSON.stringify({ jsonrpc: this.facts.jsonrpc, id, method, params })}\n`, "utf8");
  }

  /** Sends the request on the connected socket. */
  protected send(write: (bytes: Buffer) => void, request: Buffer): void {
    write(request);
  }

  /** Whether a line (or the start of one) is over the limit. */
  protected tooLong(bytes: Buffer): boolean {
    return bytes.length > this.facts.maxLineBytes;
  }

  /** Strict UTF-8, without a byte order mark. */
  protected decode(line: Buffer): string {
    if (line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf)
      throw new Error("the reply starts with a byte order mark");
    return strictUtf8.decode(line);
  }

  /** RFC 8259 JSON (JSON.parse takes nothing else: no NaN, comments or trailing commas). */
  protected parse(text: string): unknown {
    return JSON.parse(text);
  }

  /** The same JSON value of the same type: 1 is not "1", true, or [1]. */
  protected sameId(got: unknown, sent: unknown): boolean {
    return typeof got === typeof sent && got === sent;
  }

  /** An integer: a boolean, a string or 1.5 is not one. */
  protected isCode(code: unknown): boolean {
    return typeof code === "number" && Number.isInteger(code);
  }

  /** The response envelope: jsonrpc, the id echoed, exactly one of result and error. */
  protected judge(reply: unknown, id: unknown): Outcome {
    if (!isObject(reply)) return rejected("the reply is not a JSON object");
    if (reply.jsonrpc !== this.facts.jsonrpc) return rejected(`the reply's jsonrpc is not "${this.facts.jsonrpc}"`);
    if (!has(reply, "id")) return rejected("the reply carries no id");
    if (!this.sameId(reply.id, id)) return rejected(`the reply's id ${JSON.stringify(reply.id)} is not the request's`);
    const hasResult = has(reply, "result");
    const hasError = has(reply, "error");
    if (hasResult === hasError) return rejected("the reply must carry exactly one of result and error");
    if (hasResult) return { kind: "result", result: reply.result };
    const error = reply.error;
    if (!isObject(error)) return rejected("the reply's error is not an object");
    if (!this.isCode(error.code)) return rejected("the reply's error code is not an integer");
    if (typeof error.message !== "string") return rejected("the reply's error message is not a string");
    return { kind: "remote-error", error: error as { code: number; message: string } };
  }

  /** The connection ended before a complete line: there is no response. */
  protected atEnd(partial: Buffer): Outcome {
    return rejected(
      partial.length
        ? `the connection ended after ${partial.length} bytes without LF`
        : "the connection ended without a reply",
    );
  }

  /**
   * A reply line whose LF has not come yet, in the segments read so far (`size` bytes): read on
   * (undefined), or the outcome now. A reply may arrive in any number of segments.
   */
  protected unfinished(segments: readonly Buffer[], size: number): Outcome | undefined {
    // Never buffer past the limit: a peer that never sends LF is rejected as soon as it is over.
    if (size > this.facts.maxLineBytes && this.tooLong(Buffer.concat(segments)))
      return rejected(`the reply line is over ${this.facts.maxLineBytes} bytes`);
    return undefined;
  }

  /** How long the client waits: one deadline for the whole call (every connection of it), started before connecting. */
  protected armDeadline(ms: number, expire: () => void): Deadline {
    const timer = setTimeout(expire, Math.min(ms, MAX_TIMER_MS));
    return { onData: () => {}, onConnect: () => {}, clear: () => clearTimeout(timer) };
  }

  /** Whether a connection (numbered from 0) authorizes before its request: each one does, authorization never carries over. */
  protected authorizes(_connection: number): boolean {
    return true;
  }

  /** Whether to send the request again on the same connection after this remote error: never, it is the answer. */
  protected resend(_error: { code: number }): boolean {
    return false;
  }

  /** How many times to reconnect after a connection ended without a reply. */
  protected retries(args: CallArgs): number {
    return args.retries ?? 0;
  }

  /** A read as it arrives: an outcome now (the read is refused), or undefined to read its lines. */
  protected onRead(_data: Buffer): Outcome | undefined {
    return undefined;
  }

  /** The next reply among the complete lines in hand, in connection order. */
  protected nextLine(lines: Buffer[]): Buffer {
    return lines.shift()!;
  }

  /** The cursor for the next page after this one, or undefined once caught up: the cursor is exclusive. */
  protected nextCursor(page: { latestSeq: number; events: { seq: number }[] }): number | undefined {
    const last = page.events.at(-1)?.seq;
    return last === undefined || last >= page.latestSeq ? undefined : last;
  }

  /** Reads events page after page until caught up; the outcome holds them all, in order. */
  private async follow(
    first: Step,
    params: Record<string, unknown>,
    exchange: (method: string, params: Record<string, unknown>) => Promise<Step>,
  ): Promise<Step> {
    const events: unknown[] = [];
    let got = first;
    for (;;) {
      if (got.ended || got.outcome.kind !== "result") return got;
      const page = got.outcome.result as { latestSeq: number; events: { seq: number }[] };
      if (!isObject(page) || !Array.isArray(page.events) || typeof page.latestSeq !== "number")
        return { outcome: rejected("an events result without latestSeq and events"), ended: false };
      events.push(...page.events);
      const afterSeq = this.nextCursor(page);
      if (afterSeq === undefined) return { outcome: { kind: "result", result: { ...page, events } }, ended: false };
      got = await exchange("events", { ...params, afterSeq });
    }
  }

  /** Reads one line as one response to the request with this id. */
  protected interpret(line: Buffer, id: unknown): Outcome {
    if (this.tooLong(line)) return rejected(`the reply line is over ${this.facts.maxLineBytes} bytes`);
    let text: string;
    try {
      text = this.decode(line);
    } catch (err) {
      return rejected(`the reply is not strict UTF-8: ${(err as Error).message}`);
    }
    let reply: unknown;
    try {
      reply = this.parse(text);
    } catch (err) {
      return rejected(`the reply is not JSON: ${(err as Error).message}`);
    }
    return this.judge(reply, id);
  }

  /** One call: validates everything it was given before connecting, then the request (after auth where a token is given). */
  async call(args: CallArgs): Promise<Outcome> {
    const seconds = this.parseTimeout(args.timeout);
    this.checkHost(args.host, args.allowRemote ?? false);
    if (!Number.isInteger(args.port) || args.port < 1 || args.port > 65535)
      throw new UsageError(`the port must be 1..65535, not ${args.port}`);
    let expire!: () => void;
    const expired = new Promise<Outcome>((resolve) => {
      expire = () => resolve(rejected(`no complete response within the timeout of ${seconds} s`));
    });
    const deadline = this.armDeadline(seconds * 1000, () => expire());
    let line: LineReader | undefined;
    let over = false;
    const attempts = async (): Promise<Outcome> => {
      for (let connection = 0; !over; connection++) {
        // Ids are per connection: each one starts afresh.
        let id = 1;
        if (connection) {
          await sleep(RETRY_PAUSE_MS);
          if (over) break;
          deadline.onConnect?.();
        }
        line = this.open(args, deadline);
        const exchange = async (method: string, params: Record<string, unknown>) => {
          const ask = id++;
          let got = await line!.exchange(this.encodeRequest(ask, method, params), ask);
          while (!got.ended && got.outcome.kind === "remote-error" && this.resend(got.outcome.error)) {
            await sleep(RETRY_PAUSE_MS);
            if (over) break;
            got = await line!.exchange(this.encodeRequest(ask, method, params), ask);
          }
          return got;
        };
        let got = args.token && this.authorizes(connection) ? await exchange("auth", { token: args.token }) : undefined;
        if (got && !got.ended && got.outcome.kind === "result") {
          const result = got.outcome.result;
          if (!isObject(result) || result.authorized !== true)
            return rejected("the bridge did not authorize the token given");
          got = undefined;
        }
        got ??= await exchange(args.method, args.params);
        if (args.follow && args.method === "events") got = await this.follow(got, args.params, exchange);
        line.close();
        if (!got.ended || connection >= this.retries(args)) return got.outcome;
      }
      return expired;
    };
    const outcome = await Promise.race([attempts(), expired]);
    over = true;
    deadline.clear();
    line?.close();
    return outcome;
  }

  /** One connection: requests written, replies read line by line (the bytes after an LF are the next line's). */
  private open(args: CallArgs, deadline: Deadline): LineReader {
    const socket = connect({ host: args.host, port: args.port });
    const connected = new Promise<void>((resolve) => socket.once("connect", resolve));
    const lines: Buffer[] = [];
    let chunks: Buffer[] = [];
    let size = 0;
    let end: Step | undefined;
    let wake = () => {};
    let stopped!: () => void;
    const failed = new Promise<void>((resolve) => (stopped = resolve));
    const stop = (step: Step) => {
      end ??= step;
      stopped();
      wake();
    };
    socket.on("data", (data: Buffer) => {
      deadline.onData();
      const refused = this.onRead(data);
      if (refused) return stop({ outcome: refused, ended: false });
      let from = 0;
      for (let lf = data.indexOf(0x0a); lf !== -1; lf = data.indexOf(0x0a, from)) {
        lines.push(Buffer.concat([...chunks, data.subarray(from, lf)]));
        chunks = [];
        size = 0;
        from = lf + 1;
      }
      if (from < data.length) {
        chunks.push(data.subarray(from));
        size += data.length - from;
      }
      const early = from === 0 ? this.unfinished(chunks, size) : undefined;
      if (early) stop({ outcome: early, ended: false });
      wake();
    });
    const ended = () => {
      const outcome = this.atEnd(Buffer.concat(chunks));
      stop({ outcome, ended: outcome.kind === "rejected" });
    };
    socket.on("end", ended);
    socket.on("close", ended);
    socket.on("error", (err: NodeJS.ErrnoException) =>
      stop({ outcome: rejected(`connection failed: ${err.code ?? err.message}`), ended: true }),
    );
    const next = async (id: number): Promise<Step> => {
      for (;;) {
        if (lines.length) return { outcome: this.interpret(this.nextLine(lines), id), ended: false };
        if (end) return end;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    };
    return {
      exchange: async (request, id) => {
        await Promise.race([connected, failed]);
        if (end && !lines.length) return end;
        this.send((bytes) => socket.write(bytes), request);
        return next(id);
      },
      close: () => socket.destroy(),
    };
  }
}

/** What one request on a connection came to; `ended`: the connection ended (or failed) before a reply. */
interface Step {
  outcome: Outcome;
  ended: boolean;
}

interface LineReader {
  exchange(request: Buffer, id: number): Promise<Step>;
  close(): void;
}

export interface Deadline {
  onData(): void;
  /** A new connection of the same call begins. */
  onConnect?(): void;
  clear(): void;
}

/** Parses the command line; bad usage is a UsageError. */
