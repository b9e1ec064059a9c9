import fc from "fast-check";
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
import { type PropertyRun, propertyFinding } from "./property.js";
import { redactor } from "./redact.js";
import { Judged, unterminated } from "./reply.js";
import { Transcript } from "./transcript.js";

export { UNTERMINATED } from "./reply.js";

/** Ends the note that opens a connection kept beside the open ones (otherwise opening one closes the others). */
export const ALONGSIDE = " alongside the open ones";
/** A property's generated cases may wait on the game loop for 1/WAIT_SHARE of the profile's time budget. */
const WAIT_SHARE = 20;

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
export class Harness implements CheckContext {
  readonly contract: Contract;
  readonly timeoutMs: number;
  readonly runs: number;
  readonly timeBudgetMs: number;
  readonly deadline: number;
  readonly tokenConfigured: boolean;
  readonly replayPath?: string;
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
    this.replayPath = options.replayPath;
    this.concurrentConnections = options.concurrentConnections;
    this.ledger = options.ledger;
    this.unreached = options.unreached;
    this.redact = redactor(options.token);
  }

  /** Set once the check is over (or out of time): a late continuation must not touch the bridge. */
  private stopped = false;

  stop(): void {
    this.stopped = true;
    this.closeAll();
  }

  private get expired(): boolean {
    return this.stopped || Date.now() >= this.options.deadline;
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

  async property<T>(
    arbitrary: fc.Arbitrary<T>,
    judge: (input: T) => Promise<Finding>,
    options: PropertyOptions<T> = {},
  ): Promise<Finding> {
    const run: PropertyRun = { index: 0, restartsFrom: 0, notRun: 0, cut: 0 };
    const restart = this.options.endpoint.restart?.bind(this.options.endpoint);
    // An exact replay runs the one case at its path, once: fast-check would otherwise go on to the
    // cases after it and shrink whatever fails there, and call a different case the same failure.
    const exact = this.options.path !== undefined;
    // A failure may leave a bridge we cannot restart broken: shrinking would then chase a different fault.
    const noShrink = exact || (options.restartAfterFailure && !restart);
    // Generated cases after the classes wait on the game loop for no more than the check's share of the
    // profile's time budget: a bridge that completes a command per game tick gets fewer random cases, and the
    // finding says so, rather than a run many times longer. The classes always run whole.
    const classes = options.examples?.length ?? 0;
    const waitShare = Math.round(this.timeBudgetMs / WAIT_SHARE / (options.sharedBy ?? 1));
    const waitedBefore = this.waitedMs;
    // The first class runs alone (a bridge failing it is judged with nothing beside it); the others may settle.
    const settles = !exact && restart && options.settle && classes > 2 ? restart : undefined;
    let settled = 0;
    // Leave time to finish the case under way and report: no case starts past half of what is left (or past two
    // timeouts before the deadline, if later). This is fast-check's interruptAfterTimeLimit without its race, which
    // would leave the case under way running beside the next one on this harness's connections, each closing the
    // other's and reading that as a bridge that stopped answering.
    const stopCasesAt =
      Date.now() +
      Math.max(1, (this.options.deadline - Date.now()) / 2, this.options.deadline - Date.now() - this.timeoutMs * 2);
    const result = await fc.check(
      fc.asyncProperty(arbitrary, async (input) => {
        if (run.inconclusive) return true; // stop shrinking towards a harness fault
        if (Date.now() >= stopCasesAt) throw new fc.PreconditionFailure(true);
        if (exact) {
          if (run.ran !== undefined) return true;
          run.ran = "";
        }
        const at = run.failure ? undefined : String(run.index++);
        if (at === "1" && settles) settled = 1 + (await this.settle(options, settles));
        if (at !== undefined && Number(at) < settled) return true; // judged together with the other classes
        if (!exact && at !== undefined && Number(at) >= classes && this.waitedSince(waitedBefore) > waitShare) {
          run.notRun++;
          return true;
        }
        // Once shrinking, every attempt starts on a freshly started bridge: a minimal case that replays alike.
        if (run.failure && options.restartAfterFailure) await restart?.();
        const finding = await this.runCase(() => this.caseFinding(judge, input, options.liveness));
        // Named once it ran: a stateful case prints the commands it ran.
        if (exact) run.ran = fc.stringify(input);
        return this.tally(run, finding, input, at, exact);
      }),
      {
        numRuns: options.runs ?? this.runs,
        examples: (options.examples ?? []).map((e) => [e] as [T]),
        seed: this.options.seed,
        ...(this.options.path ? { path: this.options.path } : {}),
        markInterruptAsFailure: false,
        endOnFailure: noShrink,
      },
    );
    if (run.shrinkFrom !== undefined && this.options.stats) {
      this.options.stats.shrinkingMs += Date.now() - run.shrinkFrom;
      this.options.stats.shrinkRestartsMs += (this.options.endpoint.restartMs ?? 0) - run.restartsFrom;
    }
    // Leave the bridge as healthy as it was found for the checks after this one.
    if (run.failure && options.restartAfterFailure && !this.stopped) await restart?.();
    if (run.inconclusive) return run.inconclusive;
    if (exact) return this.replayed(run.ran, run.failure ?? run.warning, result.errorInstance);
    return propertyFinding(result, run, {
      noShrink,
      waitShare,
      seed: this.options.seed,
      ledger: this.ledger,
    });
  }

  /** PropertyOptions.settle of the classes after the first: how many passed (none on a fault or a warning). */
  private async settle<T>(options: PropertyOptions<T>, restart: () => Promise<void>): Promise<number> {
    const [examples, settle] = [options.examples?.slice(1) ?? [], options.settle];
    if (!settle) return 0;
    let settled: number | undefined = 0; // a fault part-way tried some: none settled
    const finding = await this.runCase(async () => {
      settled = await settle(examples);
      return { verdict: "pass", message: "settled together" };
    });
    if (settled === undefined) return 0;
    if (finding.verdict !== "pass") settled = 0;
    if (settled < examples.length && !this.expired) await restart(); // those left run alone, on a fresh bridge
    return settled;
  }

  /** One case of a property judged; with `liveness`, a pass is a failure where the bridge then stops answering. */
  private async caseFinding<T>(
    judge: (input: T) => Promise<Finding>,
    input: T,
    liveness: boolean | undefined,
  ): Promise<Finding> {
    const f = await judge(input);
    if (!liveness) return f;
    const alive = await this.alive(); // also restarts an owned bridge, so shrinking starts clean
    if (f.verdict !== "fail" && !alive) {
      return {
        verdict: "fail" as const,
        message: "The bridge stopped answering ping on a fresh connection after this input.",
        expected: "the bridge keeps serving after any input",
        actual: "no answer to ping on a new connection",
        oracle: { kind: "alive" as const },
      };
    }
    return f;
  }

  /** A case's finding counted in `run`: whether the property holds for it, as fast-check asks. */
  private tally<T>(run: PropertyRun, finding: Finding, input: T, at: string | undefined, exact: boolean): boolean {
    if (finding.verdict === "error") {
      // A case the check's deadline cut short was not judged: it is not counted as passed, and an exact
      // replay cut short replayed nothing.
      if (!this.expired || exact) run.inconclusive = finding;
      else run.cut++;
      return true;
    }
    if (finding.verdict === "fail") {
      run.failure = finding;
      if (run.shrinkFrom === undefined) {
        run.shrinkFrom = Date.now();
        run.restartsFrom = this.options.endpoint.restartMs ?? 0;
      }
      return false;
    }
    if (finding.verdict === "warn" && !run.warning) {
      run.warning = { ...finding, counterexample: finding.counterexample ?? fc.stringify(input) };
      run.warningPath = at;
    }
    return true;
  }

  /** Time this check has spent waiting for completions since `before` (not a check's beside it). */
  private waitedSince(before: number): number {
    return this.waitedMs - before;
  }

  /** The finding of an exact replay: the one case at the path, named whatever its verdict. */
  private replayed(ran: string | undefined, found: Finding | undefined, error: unknown): Finding {
    const { seed, path, replayPath } = this.options;
    // A replay that ran no case did not replay anything: that is not a fix.
    if (ran === undefined)
      return {
        verdict: "error",
        message: `the case could not be replayed (seed ${seed}, path ${path}): ${String(error ?? "no case ran")}`,
      };
    const finding = found ?? { verdict: "pass" as const, message: "The replayed case passed." };
    return { ...finding, counterexample: ran, seed, path, ...(replayPath ? { replayPath } : {}) };
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
