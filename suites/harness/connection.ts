import { once } from "node:events";
import { connect as netConnect, type Socket } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { TranscriptEntry } from "../../protocol/verdict.js";
import { type MachineWait, machine } from "./machine.js";
import { Transcript } from "./transcript.js";
import { keepOf, type Segments, strictUtf8, WireEntry } from "./wire-entry.js";

export { repeatedRun, strictUtf8 } from "./wire-entry.js";
export type { TranscriptEntry };

/** The notes a transcript carries about how its connection ended or was cut short (read back by a replay). */
export const NOTE = {
  peerFin: "peer closed its side (FIN)",
  closed: "connection closed",
  halfClosed: "half-closed: no more bytes from us (FIN sent)",
  reset: "reset by us (RST)",
  /** Followed by the error's code. */
  socketError: "socket error ",
  /** Followed by the limit and the length. */
  oversized: "received a line over ",
} as const;

/** What one read off the wire produced. */
/** The most bytes without an LF that a timed-out read hands over to be looked at. */
const UNTERMINATED_TAIL_MAX = 64 * 1024;

export type ReadResult =
  | Line
  | { kind: "oversized"; bytes: number }
  | { kind: "closed"; partial: number }
  | { kind: "reset"; code: string }
  /** `tail`: the bytes received since the last LF, where they are few enough to look at. */
  | { kind: "timeout"; partial: number; tail?: Buffer };

/**
 * A line read off the wire, without its LF: its bytes, or its text where the connection decoded it (a short line of
 * strict UTF-8, byte order mark kept), from which the same bytes are made again when asked for.
 */
export class Line {
  readonly kind = "line";
  constructor(private held: Buffer | string) {}

  /** The line decoded, where it was short and strict UTF-8; otherwise undefined. */
  get text(): string | undefined {
    return typeof this.held === "string" ? this.held : undefined;
  }

  get bytes(): Buffer {
    if (typeof this.held === "string") return Buffer.from(this.held, "utf8");
    return this.held;
  }
}

/** What a run sent and received over all its connections, and how long it waited for the bridge. */
export class WireStats {
  /** Lines sent (each LF ends one). */
  lines = 0;
  bytesSent = 0;
  bytesReceived = 0;
  /** Time during which at least one read waited for the bridge (not the sum over connections). */
  waitingMs = 0;
  /** Time spent shrinking failures to their minimal cases, and re-sending them (--recheck). */
  shrinkingMs = 0;
  recheckingMs = 0;
  /** Of shrinkingMs and recheckingMs, the time spent restarting the bridge (counted once, as restarting). */
  shrinkRestartsMs = 0;
  recheckRestartsMs = 0;
  private waits = 0;
  private since = 0;

  sent(data: Buffer | string): void {
    if (typeof data === "string") {
      this.bytesSent += Buffer.byteLength(data, "utf8");
      for (let at = data.indexOf("\n"); at !== -1; at = data.indexOf("\n", at + 1)) this.lines++;
      return;
    }
    this.bytesSent += data.length;
    for (let at = data.indexOf(LF); at !== -1; at = data.indexOf(LF, at + 1)) this.lines++;
  }

  waitStarted(): void {
    if (this.waits++ === 0) this.since = performance.now();
  }

  waitEnded(): void {
    if (--this.waits === 0) this.waitingMs += performance.now() - this.since;
  }
}

export interface ConnectionOptions {
  /** Where the run counts what crosses the wire. */
  stats?: WireStats;
  /** Largest line payload accepted before the LF; a longer one reads as "oversized". */
  maxLineBytes: number;
  connectTimeoutMs: number;
  /** Absolute time (Date.now()) after which every wait ends at once. */
  deadline?: number;
  /** Applied to every recorded byte (removes the token). */
  redact?: (bytes: Buffer) => Buffer;
  /** Record a transcript (off in benchmarks). */
  record?: boolean;
  /** Bytes of one transcript entry kept; the rest is counted, not stored. */
  transcriptBytes?: number;
  /** Longest wait for a stalled write to drain (the peer stopped reading). Default: until the deadline. */
  stallTimeoutMs?: number;
  /** Time zero of the transcript (default: when the connection opened). */
  epoch?: number;
  /** Where entries go (default: a transcript of this connection's own), so several connections can share one. */
  transcript?: Transcript;
}

export interface WriteOptions {
  /** Offsets at which the bytes are cut into separate writes. */
  splitAt?: number[];
  /**
   * Pause between those writes. Without one, each write still waits a turn of the event loop,
   * so it reaches the socket on its own (TCP_NODELAY is set): a segment of its own, not coalesced.
   */
  delayMs?: number;
}

export class ConnectError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const LF = 0x0a;

/** A TCP client with byte-level control: split writes, bounded line reads, deadlines, a transcript. */
export class Connection {
  readonly transcript: Transcript;
  private readonly started: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Set once a line passed the limit: the rest of what arrives is not read. */
  private stopReading = false;
  private readonly ready: ReadResult[] = [];
  private end?: ReadResult;
  private waiter?: () => void;
  private wait: MachineWait = { until: 0, ms: 0, mark: 0 };
  private timer?: NodeJS.Timeout;
  private timerMs = 0;

  private constructor(
    private readonly socket: Socket,
    private readonly options: ConnectionOptions,
  ) {
    this.started = options.epoch ?? Date.now();
    this.transcript = options.transcript ?? new Transcript();
    socket.on("end", () => this.finish({ kind: "closed", partial: this.pendingBytes }, NOTE.peerFin));
    socket.on("error", (err: NodeJS.ErrnoException) =>
      this.finish({ kind: "reset", code: err.code ?? err.message }, `${NOTE.socketError}${err.code ?? err.message}`),
    );
    socket.on("close", () => this.finish({ kind: "closed", partial: this.pendingBytes }, NOTE.closed));
  }

  static async open(host: string, port: number, options: ConnectionOptions): Promise<Connection> {
    // One read buffer, reused for every read: a stream of any length costs no allocation per chunk.
    const early: Buffer[] = [];
    let sink = (bytes: Buffer): void => void early.push(Buffer.from(bytes));
    const readBuffer = Buffer.allocUnsafe(65_536);
    const socket = netConnect({
      host,
      port,
      noDelay: true,
      onread: {
        buffer: readBuffer,
        callback: (n) => {
          if (options.stats) options.stats.bytesReceived += n;
          sink(readBuffer.subarray(0, n));
          return true;
        },
      },
    });
    const limit = Math.min(options.connectTimeoutMs, remaining(options.deadline));
    const timer = setTimeout(
      () => socket.destroy(Object.assign(new Error("connect timed out"), { code: "ETIMEDOUT" })),
      limit,
    );
    try {
      await once(socket, "connect");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "ECONNECT";
      throw new ConnectError(`cannot connect to ${formatHostPort(host, port)}: ${code}`, code);
    } finally {
      clearTimeout(timer);
    }
    const conn = new Connection(socket, options);
    sink = (bytes) => conn.receive(bytes);
    for (const bytes of early) conn.receive(bytes);
    return conn;
  }

  get closed(): boolean {
    return this.end !== undefined;
  }

  /**
   * Writes bytes, optionally cut at offsets with pauses; waits for drain while reads go on (true at once where the
   * socket took them whole). The bytes are recorded as they are when the transcript is read: a buffer handed in is
   * not to be changed afterwards.
   */
  write(data: Buffer | string, options: WriteOptions = {}): Promise<boolean> | boolean {
    if (!options.splitAt?.length) {
      // Short text goes to the socket as it is: the socket encodes it as UTF-8, with no buffer of ours in between.
      const piece = typeof data === "string" && data.length > keepOf(this.options) ? Buffer.from(data, "utf8") : data;
      const written = this.writePiece(piece);
      // Counted and recorded once the bytes are on their way, while the bridge works on them.
      this.options.stats?.sent(piece);
      this.record("send", piece);
      return written;
    }
    return this.writeSplit(data, options.splitAt, options.delayMs);
  }

  /** Cut into segments: recorded first, as a reply may come back between them. */
  private async writeSplit(data: Buffer | string, splitAt: number[], delayMs = 0): Promise<boolean> {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    this.options.stats?.sent(bytes);
    const cuts = [...new Set(splitAt)].filter((n) => n > 0 && n < bytes.length).sort((a, b) => a - b);
    const pause = delayMs ? { pauseMs: delayMs } : {};
    this.record("send", bytes, 0, cuts.length ? { cuts, ...pause } : undefined);
    let from = 0;
    for (const to of [...cuts, bytes.length]) {
      if (from > 0 && delayMs) await this.pause(delayMs);
      else if (from > 0) await nextTurn();
      if (!(await this.writePiece(bytes.subarray(from, to)))) return false;
      from = to;
    }
    return true;
  }

  /**
   * Waits `ms` for the peer to read the last segment before the next arrives. A pause whose timer ran late (the
   * machine, or this process, was busy) may have given the peer no time to read either, so it is taken again, up to
   * PAUSE_ATTEMPTS in all and within the deadline. Each ends with a turn of the event loop, so a bridge in this
   * process reads what is waiting before the next segment goes out.
   */
  private async pause(ms: number): Promise<void> {
    for (let attempt = 0; attempt < PAUSE_ATTEMPTS; attempt++) {
      const left = remaining(this.options.deadline);
      if (left <= 0 || this.socket.destroyed || this.end) return;
      const start = performance.now();
      await sleep(Math.min(ms, left));
      await nextTurn();
      // Timers run a millisecond or two late on an idle machine: that is not a late pause.
      if (performance.now() - start < ms + Math.max(ms / 2, 4)) return;
    }
  }

  private writePiece(piece: Buffer | string): Promise<boolean> | boolean {
    if (this.socket.destroyed || this.socket.writableEnded || this.end) return false;
    if (this.socket.write(piece)) return true;
    // Backpressure: wait for drain, but give up when the peer stops reading, goes away, or the deadline passes.
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.socket.off("drain", onDrain);
        this.socket.off("close", onClose);
        this.socket.off("end", onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(
        () => done(false),
        Math.min(this.options.stallTimeoutMs ?? Infinity, remaining(this.options.deadline)),
      );
      this.socket.on("drain", onDrain);
      this.socket.on("close", onClose);
      this.socket.on("end", onClose);
    });
  }

  /** Half-closes: no more bytes from us, reads go on. */
  endWrites(): void {
    this.note(NOTE.halfClosed);
    this.socket.end();
  }

  /** No line within the timeout: with the bytes that came without their LF, where they are short. */
  private timedOut(): ReadResult {
    const short = this.pendingBytes > 0 && this.pendingBytes <= UNTERMINATED_TAIL_MAX;
    return { kind: "timeout", partial: this.pendingBytes, ...(short ? { tail: Buffer.concat(this.pending) } : {}) };
  }

  /** The next line (payload without LF), or why there is none within the timeout. */
  read(timeoutMs: number): Promise<ReadResult> {
    return this.readAs(timeoutMs, same);
  }

  /**
   * The next read passed through `take` as soon as it is there (what `take` throws rejects): a caller that turns
   * the line into something else gets that with no promise in between.
   */
  readAs<T>(timeoutMs: number, take: (read: ReadResult) => T): Promise<T> {
    const next = this.ready.shift() ?? this.end;
    if (next) return new Promise<T>((resolve) => resolve(take(next)));
    const limit = Math.min(timeoutMs, remaining(this.options.deadline));
    const stats = this.options.stats;
    stats?.waitStarted();
    return new Promise<T>((resolve, reject) => {
      this.wait = machine.wait(limit);
      this.waiter = () => {
        this.waiter = undefined;
        stats?.waitEnded();
        try {
          resolve(take(this.ready.shift() ?? this.end ?? this.timedOut()));
        } catch (err) {
          reject(err);
        }
      };
      // One timer per connection, re-armed for each read: a round trip allocates no timer.
      if (this.timer && this.timerMs === limit) this.timer.refresh();
      else {
        clearTimeout(this.timer);
        this.timerMs = limit;
        this.timer = setTimeout(() => this.onTimer(), limit).unref(); // the socket keeps the process alive while it matters
      }
    });
  }

  private onTimer(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    // Lengthened by the moments this process stood still (machine.ts); one more turn reads a reply that came then.
    const left = machine.left(this.wait, remaining(this.options.deadline));
    if (left <= 0) return void setImmediate(() => this.waiter === waiter && waiter());
    this.timerMs = left;
    this.timer = setTimeout(() => this.onTimer(), left).unref();
  }

  /** Sends one line and reads one. */
  async exchange(line: Buffer | string, timeoutMs: number, options?: WriteOptions): Promise<ReadResult> {
    const bytes = typeof line === "string" ? Buffer.from(`${line}\n`, "utf8") : line;
    await this.write(bytes, options);
    return this.read(timeoutMs);
  }

  close(): void {
    clearTimeout(this.timer);
    if (!this.socket.destroyed) this.socket.destroy();
    this.waiter?.(); // a read still waiting ends with the connection
  }

  /** Ends the connection with a reset (RST), not a FIN: what a peer that crashed or gave up leaves behind. */
  reset(): void {
    clearTimeout(this.timer);
    this.note(NOTE.reset);
    if (!this.socket.destroyed) this.socket.resetAndDestroy();
    this.waiter?.();
  }

  /** Takes bytes off the wire; `chunk` is the shared read buffer, so whatever is kept is copied. */
  private receive(chunk: Buffer): void {
    if (this.stopReading) return;
    const max = this.options.maxLineBytes;
    let at = chunk.indexOf(LF);
    while (at !== -1) {
      const head = chunk.subarray(0, at);
      if (this.pendingBytes + head.length > max) {
        this.oversized(this.pendingBytes + head.length);
        return;
      } else {
        const line =
          this.pending.length === 0 ? this.line(head, true) : this.line(Buffer.concat([...this.pending, head]));
        this.record("recv", line.text ?? line.bytes, 1);
        this.push(line);
      }
      this.pending = [];
      this.pendingBytes = 0;
      chunk = chunk.subarray(at + 1);
      at = chunk.indexOf(LF);
    }
    if (chunk.length === 0) return;
    if (this.pendingBytes + chunk.length > max) {
      this.oversized(this.pendingBytes + chunk.length);
      return;
    }
    this.pending.push(Buffer.from(chunk));
    this.pendingBytes += chunk.length;
  }

  /**
   * A line past the limit is judged as soon as it passes it, and not read to its end: the bridge broke the framing,
   * so nothing after it on this connection can be trusted, and its end may be 100 MiB away. The connection is closed
   * (what is still in flight is never read, nor counted as received).
   */
  private oversized(bytes: number): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.recordOversized(bytes);
    this.push({ kind: "oversized", bytes });
    this.stopReading = true;
    this.socket.destroy();
  }

  /**
   * A line from its bytes, which are `shared` where they are the read buffer (and so copied if kept). A short one is
   * decoded: a reply is read as text, and the text stands for its bytes. A long one, or one that is not strict
   * UTF-8, is kept as bytes.
   */
  private line(bytes: Buffer, shared = false): Line {
    if (bytes.length <= keepOf(this.options)) {
      try {
        return new Line(strictUtf8.decode(bytes));
      } catch {}
    }
    return new Line(shared ? Buffer.from(bytes) : bytes);
  }

  private push(result: ReadResult): void {
    this.ready.push(result);
    this.waiter?.();
  }

  private finish(result: ReadResult, note: string): void {
    if (this.end) return;
    if (this.pendingBytes > 0) this.record("recv", Buffer.concat(this.pending), 0);
    this.end = result;
    this.note(note);
    this.waiter?.();
  }

  note(text: string): void {
    if (this.options.record === false) return;
    this.transcript.push({ dir: "event", t: Date.now() - this.started, text, length: 0 });
  }

  private recordOversized(length: number): void {
    this.note(
      `${NOTE.oversized}${this.options.maxLineBytes} bytes (${length} so far): not read further, connection closed`,
    );
  }

  private record(dir: "send" | "recv", data: Buffer | string, lf = 0, segments?: Segments): void {
    if (this.options.record === false) return;
    const entry = new WireEntry(Date.now() - this.started, dir, data, lf, this.options, segments);
    // A line per round trip is the hot path of a run: a short one is kept as it is and shown only if the
    // transcript is read; a long one is cut to size now rather than held whole.
    this.transcript.push(data.length <= keepOf(this.options) ? entry : entry.build());
  }
}

const same = <T>(value: T): T => value;

/** How many times at most a pause between segments is taken, when it keeps running late. */
const PAUSE_ATTEMPTS = 5;

export function remaining(deadline: number | undefined): number {
  return deadline === undefined ? 2 ** 31 - 1 : Math.max(0, Math.min(2 ** 31 - 1, deadline - Date.now()));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function formatHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
