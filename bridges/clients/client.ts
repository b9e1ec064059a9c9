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
}

const rejected = (reason: string): Outcome => ({ kind: "rejected", reason });
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const has = (o: object, key: string) => Object.hasOwn(o, key);
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const DECIMAL = /^\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
const MAX_TIMER_MS = 2 ** 31 - 1;

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

  /** How long the client waits: one deadline for the whole request, started before connecting. */
  protected armDeadline(ms: number, expire: () => void): { onData(): void; clear(): void } {
    const timer = setTimeout(expire, Math.min(ms, MAX_TIMER_MS));
    return { onData: () => {}, clear: () => clearTimeout(timer) };
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

  /** One call: validates everything it was given before connecting, then one request, one response. */
  async call(args: CallArgs): Promise<Outcome> {
    const seconds = this.parseTimeout(args.timeout);
    this.checkHost(args.host, args.allowRemote ?? false);
    if (!Number.isInteger(args.port) || args.port < 1 || args.port > 65535)
      throw new UsageError(`the port must be 1..65535, not ${args.port}`);
    const id = 1;
    return new Promise<Outcome>((resolve) => {
      let done = false;
      const chunks: Buffer[] = [];
      let size = 0;
      const socket = connect({ host: args.host, port: args.port });
      const deadline = this.armDeadline(seconds * 1000, () =>
        finish(rejected(`no complete response within the timeout of ${seconds} s`)),
      );
      const finish = (outcome: Outcome) => {
        if (done) return;
        done = true;
        deadline.clear();
        socket.destroy();
        resolve(outcome);
      };
      socket.on("connect", () =>
        this.send((bytes) => socket.write(bytes), this.encodeRequest(id, args.method, args.params)),
      );
      socket.on("data", (data: Buffer) => {
        deadline.onData();
        const lf = data.indexOf(0x0a);
        if (lf === -1) {
          chunks.push(data);
          size += data.length;
          const early = this.unfinished(chunks, size);
          if (early) finish(early);
          return;
        }
        finish(this.interpret(Buffer.concat([...chunks, data.subarray(0, lf)]), id));
      });
      socket.on("end", () => finish(this.atEnd(Buffer.concat(chunks))));
      socket.on("close", () => finish(this.atEnd(Buffer.concat(chunks))));
      socket.on("error", (err: NodeJS.ErrnoException) =>
        finish(rejected(`connection failed: ${err.code ?? err.message}`)),
      );
    });
  }
}

/** Parses the command line; bad usage is a UsageError. */
