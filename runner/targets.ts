import { type ChildProcess, spawn } from "node:child_process";
import { isIP } from "node:net";
import { Connection, formatHostPort, sleep } from "../suites/harness/connection.js";
import type { Endpoint } from "../suites/harness/endpoint.js";
import { endGroup } from "../suites/harness/group.js";
import { treeSchedstat } from "../suites/harness/machine.js";

/** The bridge under test, however it was reached: the harness's Endpoint, and what the run reports of it. */
export interface Target extends Endpoint {
  /** "host:port" as a user would type it. */
  endpoint: string;
  /** Started by this tool (spawned or built in). */
  spawned: boolean;
  /** What the report header says about it. */
  label: string;
  /** How many times it was restarted: a check that overlapped a restart saw another bridge. */
  restarts: number;
  /**
   * How long the bridge now serving took to start, where it is a process: a restart that swaps in one started ahead
   * takes a moment, and the start it stands for is paid beside the run.
   */
  startMs?: number;
  stop(): Promise<void>;
  /** A spawned bridge that exited on its own since the last call: how it ended and its last stderr lines. */
  takeExit?(): { exit: string; stderr: string } | undefined;
  /** Whether such an exit waits to be taken. */
  exited?(): boolean;
}

/** The target cannot be reached or started: exit code 3. */
export class TargetError extends Error {}

/** A non-loopback target without --allow-remote: refused before any connection is attempted. */
export class RemoteRefused extends Error {
  constructor(readonly host: string) {
    super(
      `${host} is not a loopback address: the wire is plaintext, so pass --allow-remote to test a remote bridge on purpose`,
    );
  }
}

const LOOPBACK_NAMES = new Set(["localhost", "localhost.", "ip6-localhost"]);

export function isLoopback(host: string): boolean {
  if (LOOPBACK_NAMES.has(host.toLowerCase())) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6)
    return host === "::1" || /^(0*:)*:?0*1$/.test(host) || host.toLowerCase().startsWith("::ffff:127.");
  return false;
}

/** Parses HOST:PORT or [IPv6]:PORT; undefined when malformed. */
export function parseEndpoint(text: string): { host: string; port: number } | undefined {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:[\]]+):(\d+)$/.exec(text);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host: m[1]!, port };
}

/**
 * A running bridge at an endpoint; probed so an unreachable one fails fast, or retried for
 * `waitMs` where CI starts the bridge in the background.
 */
export async function endpointTarget(
  host: string,
  port: number,
  { timeoutMs, waitMs = 0, allowRemote = false }: { timeoutMs: number; waitMs?: number; allowRemote?: boolean },
): Promise<Target> {
  // The last guard before a socket opens: a non-loopback address is never dialled unasked.
  if (!isLoopback(host) && !allowRemote) throw new RemoteRefused(host);
  const endpoint = formatHostPort(host, port);
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      const probe = await Connection.open(host, port, { maxLineBytes: 1, connectTimeoutMs: timeoutMs, record: false });
      probe.close();
      return {
        host,
        port,
        endpoint,
        spawned: false,
        label: `bridge at ${endpoint}`,
        restarts: 0,
        stop: async () => {},
      };
    } catch (err) {
      if (Date.now() >= until) {
        const waited = waitMs ? ` (tried for ${Math.round(waitMs / 1000)} s)` : "";
        throw new TargetError(`${(err as Error).message}${waited}: is the bridge running?`);
      }
      await sleep(Math.min(200, Math.max(0, until - Date.now())));
    }
  }
}

/**
 * Restarts one at a time: one asked for while another is under way waits for it and is that one,
 * so two checks that each find the bridge gone get one bridge started afresh, and neither goes on
 * before it listens. Otherwise a restart happens where `needed` says so.
 */
function oneAtATime(
  needed: (force: boolean) => boolean,
  restart: () => Promise<void>,
): (options?: { force?: boolean }) => Promise<void> {
  let underWay: Promise<void> | undefined;
  return async ({ force = false } = {}) => {
    if (!underWay && needed(force))
      underWay = restart().finally(() => {
        underWay = undefined;
      });
    await underWay;
  };
}

/** A bridge this process runs itself (the built-in reference bridge). */
export interface EmbeddedBridge {
  listen(): Promise<{ host: string; port: number }>;
  close(): Promise<void>;
}

/** Makes the built-in bridge; `port` 0 picks an ephemeral one, a restart asks for the same again. */
export type BridgeFactory = (options: { token?: string; port: number }) => EmbeddedBridge;

/** A bridge in this process on a loopback port (the default target: the reference bridge). */
export async function embeddedTarget(
  make: BridgeFactory,
  token?: string,
  label = "built-in reference bridge",
): Promise<Target> {
  let bridge = make({ token, port: 0 });
  const { host, port } = await bridge.listen();
  const target: Target = {
    host,
    port,
    endpoint: formatHostPort(host, port),
    spawned: true,
    label: `${label} on ${formatHostPort(host, port)}`,
    restarts: 0,
    fresh: true,
    restart: oneAtATime(
      (force) => force || !target.fresh,
      async () => {
        target.restarts++;
        const t0 = Date.now();
        await bridge.close();
        bridge = make({ token, port: target.port });
        // Fresh from before it listens: a check connecting the moment it does is counted, not overwritten.
        target.fresh = true;
        await bridge.listen().catch((err: unknown) => {
          target.fresh = false; // no bridge listens: the next restart is a real one
          throw err;
        });
        target.restartMs = (target.restartMs ?? 0) + Date.now() - t0;
      },
    ),
    stop: () => bridge.close(),
  };
  return target;
}

export interface SpawnOptions {
  /** How long the bridge may take to print its ready line. */
  startTimeoutMs: number;
  env?: NodeJS.ProcessEnv;
  /**
   * The ports bridges of this command have listened on, shared by the targets of one command (a run's bridge and its
   * lanes): once it holds two, a start is known to get a port of its own, so a target started then (a lane) starts its
   * spares with it; the first target learns it at its first restart.
   */
  ports?: Set<number>;
}

/** Starts a bridge with a shell command and reads its port from the first stdout line holding a JSON object with "port". */
export async function spawnTarget(command: string, options: SpawnOptions): Promise<Target> {
  let child = await start(command, options);
  const spares = new Spares(command, options, child.port);
  const target: Target = {
    host: child.host,
    port: child.port,
    endpoint: formatHostPort(child.host, child.port),
    spawned: true,
    label: `spawned \`${command}\` on ${formatHostPort(child.host, child.port)}`,
    restarts: 0,
    fresh: true,
    startMs: child.startMs,
    // One that exited on its own since is not fresh, whoever asks.
    restart: oneAtATime(
      (force) => force || !target.fresh || !running(child.process),
      async () => {
        target.restarts++;
        const t0 = Date.now();
        // A bridge that no longer accepts connections is usually exiting on its own: give its exit
        // a moment to arrive, so its death is reported as such and not taken for this tool's stop.
        if (!(await accepts(child.host, child.port))) await exitWithin(child.process, 1000);
        const died = child.exit;
        // Fresh from before it starts: a check connecting the moment it listens is counted, not overwritten.
        target.fresh = true;
        child = await spares.replace(child);
        child.exit = died; // a death before the restart is still to be reported
        Object.assign(target, {
          host: child.host,
          port: child.port,
          endpoint: formatHostPort(child.host, child.port),
          startMs: child.startMs,
        });
        target.restartMs = (target.restartMs ?? 0) + Date.now() - t0;
      },
    ),
    // A restart under way when the run ends finishes first, so the bridge it started is the one stopped here.
    stop: async () => {
      await spares.close();
      await spares.stop(child);
    },
    takeExit() {
      const exit = child.exit;
      child.exit = undefined;
      return exit;
    },
    exited: () => child.exit !== undefined,
    cpu: () => (child.process.pid === undefined ? undefined : treeSchedstat(child.process.pid)),
  };
  return target;
}

/**
 * Restarts of a spawned bridge, made cheap where it listens on a port of its own at each start (`--port 0`): the next
 * bridge is started while the current one serves, so a restart (a recheck's fresh bridge, a bridge a check stopped)
 * costs a swap, not a process start. A bridge on a fixed port cannot start beside the one running: known once two
 * starts gave the same port, it is stopped first and started afresh, as before.
 */
class Spares {
  private readonly ports: Set<number>;
  /** Bridges started ahead, oldest first: rechecks restart one after another, faster than one bridge starts. */
  private spares: Promise<Started | undefined>[] = [];
  /** Replaced bridges still stopping: the run's stop waits for them too, so none is left behind. */
  private readonly retiring = new Set<Promise<void>>();
  /** Set by close: no bridge is started ahead any more, and a restart under way is waited for. */
  private closed = false;
  private replacing: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly command: string,
    private readonly options: SpawnOptions,
    port: number,
  ) {
    this.ports = options.ports ?? new Set();
    this.ports.add(port);
    this.startAhead();
  }

  /** A fresh bridge in place of `current`, which is stopped. */
  replace(current: Started): Promise<Started> {
    if (this.closed) return Promise.reject(new TargetError("the run has ended: the bridge is not started again"));
    const next = this.swap(current);
    this.replacing = next.catch(() => undefined);
    return next;
  }

  /** The run ends: a restart under way finishes (its bridge is then the one to stop), and none is started ahead. */
  async close(): Promise<void> {
    this.closed = true;
    await this.replacing;
  }

  private async swap(current: Started): Promise<Started> {
    const ready = await this.spares.shift();
    let next: Started;
    if (ready && running(ready.process) && ready.port !== current.port) {
      const stopping = stopProcess(current.process).finally(() => this.retiring.delete(stopping));
      this.retiring.add(stopping);
      next = ready;
    } else {
      if (ready) await stopProcess(ready.process);
      await stopProcess(current.process);
      next = await start(this.command, this.options);
    }
    this.ports.add(next.port);
    this.startAhead();
    return next;
  }

  /** Spares up to SPARES, once a start is known to get a port of its own. */
  private startAhead(): void {
    while (!this.closed && this.ports.size > 1 && this.spares.length < SPARES)
      this.spares.push(start(this.command, this.options).catch(() => undefined));
  }

  async stop(current: Started): Promise<void> {
    const spares = this.spares;
    this.spares = [];
    await Promise.all([
      stopProcess(current.process),
      ...spares.map((spare) => spare.then((s) => (s ? stopProcess(s.process) : undefined))),
      ...this.retiring,
    ]);
  }
}

/** Bridges a spawned target keeps started ahead of its restarts. */
const SPARES = 2;
/** How long after the bridge exits its stderr is still read: a process it left behind may hold the pipe open. */
const STDERR_GRACE_MS = 2000;

/** Resolves once the child's pipes have closed (all it wrote is read), or after STDERR_GRACE_MS. */
function pipesRead(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, STDERR_GRACE_MS);
    child.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

interface Started {
  process: ChildProcess;
  /** From its spawn to its ready line. */
  startMs: number;
  host: string;
  port: number;
  /** Set when the bridge exits on its own after its ready line (not when this tool stops it). */
  exit?: { exit: string; stderr: string };
}

function start(command: string, options: SpawnOptions): Promise<Started> {
  return new Promise((resolve, reject) => {
    const spawned = Date.now();
    const child = spawn(command, {
      shell: true,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: options.env ?? process.env,
    });
    let stdout = "";
    let stderr = "";
    let settled = false;
    let exited = false;
    const settle = (error?: string, ready?: { host: string; port: number }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (ready) {
        child.stdout!.resume(); // keep draining so the bridge never blocks on a full pipe
        const started: Started = { process: child, startMs: Date.now() - spawned, ...ready };
        child.once("exit", (code, signal) => {
          if (stopping.has(child)) return;
          const tail = stderr.trim().split("\n").slice(-10).join("\n");
          started.exit = { exit: signal ? `signal ${signal}` : `code ${code}`, stderr: tail };
        });
        resolve(started);
        return;
      }
      void stopProcess(child);
      const tail = stderr.trim().split("\n").slice(-10).join("\n");
      reject(new TargetError(`${error}${tail ? `\n--- bridge stderr (last lines) ---\n${tail}` : ""}`));
    };
    const timer = setTimeout(
      () => settle(`the bridge printed no ready line (a JSON object with "port") within ${options.startTimeoutMs} ms`),
      options.startTimeoutMs,
    );
    child.stderr!.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString("utf8")).slice(-8192);
    });
    child.stdout!.on("data", (d: Buffer) => {
      if (settled) return;
      stdout += d.toString("utf8");
      let nl: number;
      while (!exited && (nl = stdout.indexOf("\n")) !== -1) {
        const ready = readyLine(stdout.slice(0, nl));
        stdout = stdout.slice(nl + 1);
        if (ready) return settle(undefined, ready);
      }
      if (stdout.length > 65536) stdout = stdout.slice(-65536);
    });
    child.on("error", (err) => settle(`cannot start the bridge: ${err.message}`));
    // The exit can be seen before the last of stderr is read: the message waits for it, as it is the why.
    child.on("exit", (code, signal) => {
      exited = true;
      if (settled) return;
      clearTimeout(timer);
      void pipesRead(child).then(() =>
        settle(`the bridge exited (${signal ?? `code ${code}`}) before printing its ready line`),
      );
    });
  });
}

/** The first JSON object on a line with an integer "port" (e.g. `READY {"host":"127.0.0.1","port":43011}`). */
export function readyLine(line: string): { host: string; port: number } | undefined {
  const at = line.indexOf("{");
  if (at === -1) return undefined;
  try {
    const value = JSON.parse(line.slice(at)) as { host?: unknown; port?: unknown };
    if (!Number.isInteger(value.port) || (value.port as number) < 1 || (value.port as number) > 65535) return undefined;
    const host =
      typeof value.host === "string" && value.host !== "" && value.host !== "0.0.0.0" && value.host !== "::"
        ? value.host
        : "127.0.0.1";
    return { host, port: value.port as number };
  } catch {
    return undefined;
  }
}

async function accepts(host: string, port: number): Promise<boolean> {
  try {
    (await Connection.open(host, port, { maxLineBytes: 1, connectTimeoutMs: 1000, record: false })).close();
    return true;
  } catch {
    return false;
  }
}

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

function exitWithin(child: ChildProcess, ms: number): Promise<void> {
  if (!running(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Bridges this tool is stopping: their exit is expected, not a death to report. */
const stopping = new WeakSet<ChildProcess>();

/** Stops a bridge: its whole process group, SIGKILL after a grace period, until nothing of it runs. */
async function stopProcess(child: ChildProcess, graceMs = 2000): Promise<void> {
  stopping.add(child);
  await endGroup(child.pid, graceMs);
}
