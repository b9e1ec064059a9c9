import type fc from "fast-check";
import type { Contract } from "../../protocol/contract.js";
import {
  type CallOptions,
  type CheckContext,
  type CommandLedger,
  clip,
  describeReply,
  Fault,
  type Finding,
  findingOf,
  type PropertyOptions,
  type ReadOptions,
  type Reply,
  violation,
} from "./check.js";
import { ConnectError, Connection, type ReadResult, type WireStats } from "./connection.js";
import type { Endpoint } from "./endpoint.js";
import { decodeLine, judgeResponse, judgeText, repeatedName, unmarked } from "./judge.js";
import { bridgeLoss } from "./machine.js";
import { connectionUnserved, UNSERVED_CONNECTION } from "./plain.js";
import { type PropertyHost, runProperty } from "./property.js";
import { redactor } from "./redact.js";
import { Judged, unterminated } from "./reply.js";
import { Transcript } from "./transcript.js";

export { UNTERMINATED } from "./reply.js";

/** Ends the note that opens a connection kept beside the open ones (otherwise opening one closes the others). */
export const ALONGSIDE = " alongside the open ones";

/** The note before the liveness probe: what follows it asks whether the bridge still serves, not about the case. */
export const PROBE_NOTE = "liveness probe: does the bridge still answer ping on a fresh connection?";

export interface ContextOptions {
  contract: Contract;
  endpoint: Endpoint;
  token?: string;
  timeoutMs: number;
  runs: number;
  timeBudgetMs: number;
  seed: number;
  /** Replays exactly one case of the check's property. */
  path?: string;
  /** With `path`, the commands of a stateful case. */
  replayPath?: string;
  /** Whether the bridge serves a second connection while a first is open (probed once). */
  concurrentConnections?: boolean;
  /** Where the run counts what crosses the wire. */
  stats?: WireStats;
  /** Where the run keeps its account of accepted and completed commands. */
  ledger?: CommandLedger;
  /** State cells the run has not reached yet (see CheckContext.unreached). */
  unreached?: readonly string[];
  deadline: number;
}

/** The harness a check runs in: connections, judged calls, properties; and the cleanup after it. */
export class Harness implements CheckContext, PropertyHost {
  readonly contract: Contract;
  readonly timeoutMs: number;
  readonly runs: number;
  readonly timeBudgetMs: number;
  readonly deadline: number;
  readonly tokenConfigured: boolean;
  readonly seed: number;
  readonly path?: string;
  readonly replayPath?: string;
  readonly endpoint: Endpoint;
  readonly stats?: WireStats;
  readonly concurrentConnections?: boolean;
  readonly ledger?: CommandLedger;
  waitedMs = 0;
  readonly unreached?: readonly string[];
  private open: Connection[] = [];
  private caseStart = Date.now();
  private caseTranscript = new Transcript();
  /**
   * The first reply of the current case that names a member twice: it breaks a SHOULD of RFC 8259 while passing
   * every MUST. Replies wait to be looked at until the next request is on its way (or the case ends), so the scan
   * runs while the bridge works rather than between its reply and our next request.
   */
  private repeated?: { name: string; text: string };
  private unscanned: string[] = [];
  private connections = 0;
  private readonly redact;

  constructor(private readonly options: ContextOptions) {
    this.contract = options.contract;
    this.timeoutMs = options.timeoutMs;
    this.runs = options.runs;
    this.timeBudgetMs = options.timeBudgetMs;
    this.deadline = options.deadline;
    this.tokenConfigured = Boolean(options.token);
    this.seed = options.seed;
    this.path = options.path;
    this.replayPath = options.replayPath;
    this.endpoint = options.endpoint;
    this.stats = options.stats;
    this.concurrentConnections = options.concurrentConnections;
    this.ledger = options.ledger;
    this.unreached = options.unreached;
    this.redact = redactor(options.token);
  }

  /** Set once the check is over (or out of time): a late continuation must not touch the bridge. */
  private over = false;

  stop(): void {
    this.over = true;
    this.closeAll();
  }

  get stopped(): boolean {
    return this.over;
  }

  get expired(): boolean {
    return this.over || Date.now() >= this.options.deadline;
  }

  async connect(options: { alongside?: boolean } = {}): Promise<Connection> {
    if (this.expired) throw new Fault("deadline", "the check ran out of time");
    if (!options.alongside) this.closeAll();
    const { endpoint } = this.options;
    const { host, port } = endpoint;
    if (endpoint.fresh) {
      endpoint.fresh = false;
      this.ledger?.restarted();
    }
    const n = ++this.connections;
    let conn: Connection;
    try {
      conn = await Connection.open(host, port, {
        maxLineBytes: this.contract.limits.maxLineBytes,
        stats: this.options.stats,
        connectTimeoutMs: this.timeoutMs,
        stallTimeoutMs: this.timeoutMs,
        deadline: this.options.deadline,
        redact: this.redact.bytes,
        epoch: this.caseStart,
        transcript: this.caseTranscript,
      });
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      throw new Fault("target-lost", `The bridge stopped accepting connections (${err.code}).`, {
        expected: "a TCP connection is accepted",
        actual: err.message,
      });
    }
    conn.note(`connection ${n} opened${options.alongside ? ALONGSIDE : ""}`);
    this.open.push(conn);
    return conn;
  }

  paceLoss(): () => number {
    const { endpoint } = this.options;
    return bridgeLoss(endpoint.cpu?.bind(endpoint));
  }

  async fresh(): Promise<boolean> {
    const { endpoint } = this.options;
    if (!endpoint.restart || this.expired) return false;
    this.closeAll();
    await endpoint.restart();
    return true;
  }

  token(): string {
    return this.options.token ?? "";
  }

  authRequest(id: unknown = "auth"): object {
    return { jsonrpc: this.contract.jsonrpc, id, method: "auth", params: { token: this.options.token ?? "" } };
  }

  async session(): Promise<Connection> {
    const conn = await this.connect();
    if (!this.options.token) return conn;
    const reply = await this.call(conn, this.authRequest());
    if (reply.kind !== "response") {
      throw new Fault("unserved", `The bridge did not answer auth on a new connection: ${describeReply(reply)}.`, {
        rule: UNSERVED_CONNECTION,
        expected: "a response",
        actual: "none",
      });
    }
    if (reply.response.error || (reply.response.result as { authorized?: unknown })?.authorized !== true) {
      throw new Fault(
        "config",
        "auth with the configured token did not authorize the connection: check --token-env and the bridge's token",
      );
    }
    return conn;
  }

  call(conn: Connection, request: object | string | Buffer, options: CallOptions = {}): Promise<Reply> {
    try {
      const raw = typeof request === "string" || Buffer.isBuffer(request);
      const line = Buffer.isBuffer(request) ? request : `${raw ? request : JSON.stringify(request)}\n`;
      // The id as it travels (JSON.stringify turns -0 into 0, drops undefined, ...).
      const id = raw ? null : (request as { id?: unknown }).id;
      const sentId =
        typeof id === "string" || id === null || (Number.isFinite(id) && !Object.is(id, -0))
          ? id
          : ((JSON.parse(JSON.stringify({ id })) as { id?: unknown }).id ?? null);
      const written = conn.write(line, options);
      this.scanReplies();
      const expect = "expectId" in options ? options : { ...options, expectId: sentId };
      const timeoutMs = expect.timeoutMs ?? this.timeoutMs;
      // The reply is judged as it arrives: nothing waits between the bridge's line and the check reading it.
      const method = raw ? undefined : (request as { method?: unknown }).method;
      const ledger = method === "act" || method === "events" ? this.ledger : undefined;
      const judged = ledger
        ? (read: ReadResult) => {
            const reply = this.judged(read, expect);
            if (reply.kind === "response") ledger.note(method, reply.response.result);
            return reply;
          }
        : (read: ReadResult) => this.judged(read, expect);
      return typeof written === "boolean"
        ? conn.readAs(timeoutMs, judged)
        : written.then(() => conn.readAs(timeoutMs, judged));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  judge(raw: Buffer, expectId: unknown) {
    return judgeResponse(raw, expectId, this.contract);
  }

  read(conn: Connection, options: ReadOptions = {}): Promise<Reply> {
    try {
      return conn.readAs(options.timeoutMs ?? this.timeoutMs, (read) => this.judged(read, options));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private judged(read: ReadResult, options: ReadOptions): Reply {
    // A wait the check's deadline cut short (or a connection closed as the check was stopped) says nothing of the
    // bridge: a reply late past the deadline is no missing reply.
    if (read.kind === "timeout" ? this.expired : this.stopped && (read.kind === "closed" || read.kind === "reset"))
      throw new Fault("deadline", "the check ran out of time");
    if (read.kind === "oversized") {
      const max = this.contract.limits.maxLineBytes;
      throw violation(
        "wire.line-limit",
        `The response line is longer than the limit of ${max} bytes.`,
        `a response of at most ${max} bytes before LF`,
        `${read.bytes} bytes without LF`,
      );
    }
    if (read.kind === "timeout" && read.tail) unterminated(read.tail);
    if (read.kind !== "line") return read;
    const text = read.text === undefined ? decodeLine(read.bytes) : unmarked(read.text);
    const response = judgeText(text, options.expectId ?? null, this.contract, options);
    // Only so many wait, and only short ones: a case that reads many replies, or long ones, before its next request
    // has them scanned as they come rather than held.
    if (this.repeated === undefined && (this.unscanned.push(text) > 64 || text.length > 4096)) this.scanReplies();
    return new Judged(response, read);
  }

  /** Scans the replies waiting for it; returns the first that names a member twice in this case. */
  private scanReplies(): { name: string; text: string } | undefined {
    if (this.unscanned.length === 0) return this.repeated;
    for (const text of this.unscanned) {
      const name = repeatedName(text);
      if (name === undefined) continue;
      this.repeated = { name, text };
      break;
    }
    this.unscanned = [];
    return this.repeated;
  }

  async alive(): Promise<boolean> {
    this.closeAll();
    if (this.expired) return true; // out of time: no verdict, and above all no restart
    this.caseTranscript.push({ dir: "event", t: Date.now() - this.caseStart, text: PROBE_NOTE, length: 0 });
    try {
      const conn = await this.session();
      const reply = await this.call(conn, {
        jsonrpc: this.contract.jsonrpc,
        id: "liveness",
        method: "ping",
        params: {},
      });
      conn.close();
      if (reply.kind === "response" && (reply.response.result as { ok?: unknown })?.ok === true) return true;
    } catch (err) {
      if (err instanceof Fault && err.kind === "config") throw err;
    }
    await this.options.endpoint.restart?.({ force: true });
    return false;
  }

  property<T>(
    arbitrary: fc.Arbitrary<T>,
    judge: (input: T) => Promise<Finding>,
    options: PropertyOptions<T> = {},
  ): Promise<Finding> {
    return runProperty(this, arbitrary, judge, options);
  }

  /** Runs one case with a fresh transcript, turning violations and faults into findings. */
  async runCase(body: () => Promise<Finding>): Promise<Finding> {
    this.caseStart = Date.now();
    this.caseTranscript = new Transcript();
    this.repeated = undefined;
    this.unscanned = [];
    this.connections = 0;
    let finding: Finding;
    try {
      finding = await body();
    } catch (err) {
      finding = findingOf(err);
      // A new connection not served: the check did not reach its own rules.
      if (err instanceof Fault && err.detail.rule === UNSERVED_CONNECTION) finding = connectionUnserved(this, finding);
    } finally {
      this.closeAll();
    }
    const repeated = this.scanReplies();
    if (finding.verdict === "pass" && repeated) {
      finding = {
        verdict: "warn",
        message: `A reply names "${repeated.name}" twice in one object: RFC 8259 says names SHOULD be unique, and readers disagree on which one counts.`,
        expected: "every name once within an object",
        actual: clip(repeated.text),
        rules: ["wire.ndjson"],
      };
    }
    return finding.verdict === "pass" || finding.transcript
      ? finding
      : { ...finding, transcript: this.caseTranscript.entries() };
  }

  closeAll(): void {
    for (const conn of this.open) conn.close();
    this.open = [];
  }
}
