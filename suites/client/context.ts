// The hostile bridge of client mode: per case, a listener on loopback, the client command started
// with the case's host, port and timeout, its request read, the case's bytes served, and what the
// client then did (its exit status, or the AICONTROL_OUTCOME line it printed).
import { createServer, type Server, type Socket } from "node:net";
import fc from "fast-check";
import type { Contract, RuleId } from "../../protocol/contract.js";
import type { TranscriptEntry } from "../../protocol/verdict.js";
import type { Finding } from "../harness/check.js";
import { runClientProcess } from "./process.js";
import { type Answer, type At, answerConnection, type CaseSpec, type SeenRequest, transcriptFrom } from "./serve.js";

export type { Answer, At, CaseSpec, SeenRequest };

/** A check of client mode: what the tool serves, the rules it judges, and how. */
export interface ClientCheck {
  /** Stable: "<rule>/<case>". */
  id: string;
  rules: readonly RuleId[];
  /** What it serves the client (or how it starts it). */
  description: string;
  /** How the check reads the rule, where the contract's words alone do not say it. */
  note?: string;
  run(ctx: ClientContext): Promise<Finding>;
}

/** How the client ended the case. */
export type Outcome = "result" | "remote-error" | "rejected" | "accepted" | "killed";

export interface CaseRun {
  /** Connections the client opened. */
  connections: number;
  request?: SeenRequest;
  /** Every request line that arrived, per connection. */
  requests: SeenRequest[][];
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Still running at the deadline, so killed. */
  killed: boolean;
  deadlineMs: number;
  /** From start to exit. */
  elapsedMs: number;
  /** From the request's arrival to exit. */
  afterRequestMs?: number;
  /** Moments this process stood still while the client ran: time the client's wait is not to be blamed for. */
  lostMs: number;
  /** Bytes of the answer still to be written when the client exited on its own (0: it stayed for all of them). */
  unsentAtExit?: number;
  /** The longest pause between two writes of the answer before that exit (the one under way included). */
  longestPauseMs?: number;
  /** The kind the client printed on an AICONTROL_OUTCOME line. */
  reported?: "result" | "remote-error" | "rejected";
  outcome: Outcome;
  stderr: string;
  /** Why the command could not be spawned at all (no shell to run it). */
  spawnError?: string;
  /** What was served, for counterexamples. */
  served?: Buffer;
  transcript: TranscriptEntry[];
}

export interface PropertyOptions<T> {
  /** Fixed cases tried first, before the generated ones. */
  examples?: T[];
  /** Generated cases (default: the run's). */
  runs?: number;
}

/** A limit on clients running at once, shared by every check of a run. */
export class Slots {
  private free: number;
  private readonly queue: { need: number; start: () => void }[] = [];
  constructor(private readonly count: number) {
    this.free = count;
  }

  /** Runs `body` in one slot. */
  use<T>(body: () => Promise<T>): Promise<T> {
    return this.hold(1, body);
  }

  /** Runs `body` once every client of the run has ended, starting no other until it is done: a quieter try. */
  alone<T>(body: () => Promise<T>): Promise<T> {
    return this.hold(this.count, body);
  }

  private async hold<T>(need: number, body: () => Promise<T>): Promise<T> {
    // First come, first served: a caller waiting for every slot is not overtaken by those wanting one.
    if (this.queue.length === 0 && this.free >= need) this.free -= need;
    else await new Promise<void>((start) => this.queue.push({ need, start }));
    try {
      return await body();
    } finally {
      this.free += need;
      while (this.queue.length && this.free >= this.queue[0]!.need) {
        const next = this.queue.shift()!;
        this.free -= next.need;
        next.start();
      }
    }
  }
}

export interface ClientContextOptions {
  contract: Contract;
  command: string;
  clientTimeoutMs: number;
  runs: number;
  seed: number;
  /** fast-check path of one case to replay. */
  path?: string;
  env: NodeJS.ProcessEnv;
  slots: Slots;
  signal?: AbortSignal;
}

/** Time a client gets beyond its own timeout to start, give up and exit. */
export const marginMs = (timeoutMs: number) => Math.max(2000, timeoutMs);

const OUTCOME = /^AICONTROL_OUTCOME\s+(\{.*\})\s*$/m;

/** What a client check may use. */
export class ClientContext {
  readonly contract: Contract;
  readonly clientTimeoutMs: number;
  readonly runs: number;
  constructor(readonly options: ClientContextOptions) {
    this.contract = options.contract;
    this.clientTimeoutMs = options.clientTimeoutMs;
    this.runs = options.runs;
  }

  /** The client's timeout as substituted for {timeout}: seconds. */
  get timeoutText(): string {
    return String(this.clientTimeoutMs / 1000);
  }

  /**
   * The client's environment without the contract's token variable: a case that answers one request would meet an
   * auth request first, and answer it as that request. Sessions give the client a token of their own (spec.env).
   */
  private clientEnv(): NodeJS.ProcessEnv {
    const { [this.options.contract.defaults.tokenEnv]: _token, ...env } = this.options.env;
    return env;
  }

  /** When this check's first case started (cases wait for a free slot first). */
  firstCaseAt: number | undefined;

  /** Runs the client command for one case; once the run is interrupted, starts no more clients. */
  runCase(spec: CaseSpec): Promise<CaseRun> {
    return this.options.slots.use(() => {
      if (this.options.signal?.aborted) throw new Error("interrupted");
      this.firstCaseAt ??= Date.now();
      return this.serve(spec);
    });
  }

  /** Runs a property over generated cases (examples first); shrinks the first failure. */
  async property<T>(
    arbitrary: fc.Arbitrary<T>,
    judge: (input: T) => Promise<Finding>,
    options: PropertyOptions<T> = {},
  ): Promise<Finding> {
    let failure: Finding | undefined;
    let warning: Finding | undefined;
    let skipped: Finding | undefined;
    let cases = 0;
    const result = await fc.check(
      fc.asyncProperty(arbitrary, async (input) => {
        // A skip is about the client, not the input (it prints no outcome line): the rest would skip alike.
        if (this.options.signal?.aborted || skipped) return true;
        const finding = await judge(input);
        cases++;
        if (finding.verdict === "fail") {
          failure = finding;
          return false;
        }
        if (finding.verdict === "warn") warning ??= finding;
        if (finding.verdict === "skip") skipped ??= finding;
        return true;
      }),
      {
        // Examples count towards numRuns in fast-check: the generated cases come on top of them.
        numRuns: (options.runs ?? this.runs) + (options.examples?.length ?? 0),
        examples: (options.examples ?? []).map((e) => [e] as [T]),
        seed: this.options.seed,
        ...(this.options.path ? { path: this.options.path } : {}),
      },
    );
    if (result.failed && failure) {
      return { ...failure, seed: result.seed, path: result.counterexamplePath ?? undefined };
    }
    if (result.failed) {
      return { verdict: "error", message: `the property could not be run: ${String(result.errorInstance)}` };
    }
    if (warning) return warning;
    // Cases that need the client's AICONTROL_OUTCOME line skip without it: all of them, or none.
    if (skipped) return skipped;
    return { verdict: "pass", message: `${cases} cases passed.` };
  }

  private async serve(spec: CaseSpec): Promise<CaseRun> {
    const started = Date.now();
    const { transcript, note, record } = transcriptFrom(started);
    const limit = this.contract.limits.maxLineBytes;
    const sockets = new Set<Socket>();
    let connections = 0;
    const requests: SeenRequest[][] = [];
    let request: SeenRequest | undefined;
    let requestAt: number | undefined;
    let served: Buffer | undefined;
    /** Bytes of the answer not yet written; as the client exited, in `unsentAtExit`. */
    let unsent: number | undefined;
    let unsentAtExit: number | undefined;
    /** When the answer's last bytes went out, and the longest pause between two writes of it up to the exit. */
    let lastSentAt: number | undefined;
    let longestPause = 0;

    const server: Server = createServer((socket) => {
      const seen: SeenRequest[] = [];
      requests.push(seen);
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on("error", () => {});
      note(`connection ${++connections} accepted from port ${socket.remotePort}`);
      void answerConnection(socket, spec, {
        connection: connections - 1,
        limit,
        waitMs: this.clientTimeoutMs / 2,
        record,
        note,
        onRequest: (r) => seen.push(r),
        onFirst: (first, bytes) => {
          if (request) return undefined;
          request = first;
          requestAt = Date.now();
          served = bytes;
          unsent = bytes?.length ?? 0;
          return (n) => {
            unsent! -= n;
            const now = Date.now();
            if (lastSentAt !== undefined) longestPause = Math.max(longestPause, now - lastSentAt);
            lastSentAt = now;
          };
        },
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const port = (server.address() as { port: number }).port;
    const host = spec.host ?? "127.0.0.1";
    const timeout = spec.timeout ?? this.timeoutText;
    const command = this.options.command
      .replaceAll("{host}", host)
      .replaceAll("{port}", String(port))
      .replaceAll("{timeout}", timeout);
    note(`client started with host ${host}, port ${port}, timeout ${timeout}`);
    const exit = await runClientProcess(
      {
        command,
        env: { ...this.clientEnv(), ...spec.env, AICONTROL_HOST: host, AICONTROL_PORT: String(port) },
        signal: this.options.signal,
        budgetMs: this.clientTimeoutMs + marginMs(this.clientTimeoutMs) + (spec.extraMs ?? 0),
        requestAt: () => requestAt,
        onExit: () => {
          unsentAtExit = unsent;
          if (lastSentAt !== undefined && unsent) longestPause = Math.max(longestPause, Date.now() - lastSentAt);
        },
      },
      started,
    );
    const { killed, deadlineMs, exitAt, stdout } = exit;
    if (killed) note(`client still running at the case's deadline of ${deadlineMs} ms: killed`);
    else note(`client exited ${exit.signal ? `on ${exit.signal}` : `with status ${exit.code}`}`);
    for (const socket of sockets) socket.destroy();
    server.close();

    const reported = reportedOutcome(stdout, note);
    const outcome: Outcome = killed ? "killed" : (reported ?? (exit.code === 0 ? "accepted" : "rejected"));
    return {
      connections,
      request,
      requests,
      exitCode: exit.code,
      signal: exit.signal,
      killed,
      deadlineMs,
      elapsedMs: exitAt - started,
      afterRequestMs: requestAt === undefined ? undefined : exitAt - requestAt,
      lostMs: exit.lostMs,
      ...(unsentAtExit !== undefined && !killed ? { unsentAtExit, longestPauseMs: longestPause } : {}),
      reported,
      outcome,
      stderr: exit.stderr.trim(),
      ...(exit.spawnError ? { spawnError: exit.spawnError } : {}),
      served,
      transcript,
    };
  }
}

/** The outcome the client reported on its AICONTROL_OUTCOME line, when it printed a readable one. */
function reportedOutcome(stdout: string, note: (text: string) => void): CaseRun["reported"] {
  const m = OUTCOME.exec(stdout);
  let reported: CaseRun["reported"];
  if (m) {
    try {
      const kind = (JSON.parse(m[1]!) as { kind?: unknown }).kind;
      if (kind === "result" || kind === "remote-error" || kind === "rejected") reported = kind;
    } catch {
      // An unreadable outcome line counts as none.
    }
    if (reported) note(`client reported the outcome ${reported}`);
  }
  return reported;
}
