// One client process of a case: started in its own process group, waited for until it exits or its
// deadline passes (then the whole group is stopped), its output kept. The deadline follows the
// machine: it counts from the client's request where one came (a client slow to start on a busy
// machine has not yet begun to wait), and it is lengthened by the moments this process stood still.
import { spawn } from "node:child_process";
import { endGroup } from "../harness/group.js";
import { afterPendingIo, machine } from "../harness/machine.js";

const KEEP = 64 * 1024;

export interface ClientProcessOptions {
  command: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** The client's time to end, counted from its request (or from its start, where none came). */
  budgetMs: number;
  /** When the client's request arrived, once it has. */
  requestAt: () => number | undefined;
  /** Called as the client's exit is seen, before anything else runs. */
  onExit?: () => void;
}

export interface ClientExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Still running at the deadline, so stopped. */
  killed: boolean;
  /** The deadline the client was held to, from its start. */
  deadlineMs: number;
  /** When it exited (or was stopped): when the exit was seen, less the stall just before that. */
  exitAt: number;
  /** Moments this process stood still while the client ran (machine.ts). */
  lostMs: number;
  /** How late this process saw the exit: it stood still that long just before (machine.ts). */
  exitLagMs: number;
  stdout: string;
  stderr: string;
  /** Why the command could not be spawned at all (no shell to run it). */
  spawnError?: string;
}

/** The longest a deadline is lengthened for the machine: the budget again, so a client that never ends still ends. */
const MOST_STRETCH = 1;

export async function runClientProcess(o: ClientProcessOptions, started = Date.now()): Promise<ClientExit> {
  const lostMark = machine.mark();
  const child = spawn(o.command, { shell: true, detached: true, stdio: ["ignore", "pipe", "pipe"], env: o.env });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => {
    if (stdout.length < KEEP) stdout += d.toString("utf8");
  });
  child.stderr!.on("data", (d: Buffer) => {
    if (stderr.length < KEEP) stderr += d.toString("utf8");
  });
  let spawnError: string | undefined;
  let ended: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let exitLagMs = 0;
  let exitSeenAt = 0;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("error", (err) => {
      spawnError = err.message;
      resolve({ code: null, signal: null });
    });
    child.once("exit", (code, signal) => resolve({ code, signal }));
  }).then((e) => {
    ended = e;
    exitSeenAt = Date.now();
    exitLagMs = machine.stalledAt(exitSeenAt);
    o.onExit?.();
    return e;
  });
  // Listened for from the start: the pipes may close in the same turn as the exit.
  const pipesClosed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const onAbort = () => void endGroup(child.pid, 500);
  o.signal?.addEventListener("abort", onAbort, { once: true });
  const due = () =>
    Math.min(started + o.budgetMs * (1 + MOST_STRETCH), (o.requestAt() ?? started) + o.budgetMs) +
    Math.min(o.budgetMs * MOST_STRETCH, machine.since(lostMark));
  let killed = false;
  for (;;) {
    const left = due() - Date.now();
    if (left > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise<void>((r) => (timer = setTimeout(r, left)))]);
      clearTimeout(timer);
      if (ended) break;
      continue;
    }
    // An exit that came while this process stood still is read before the deadline is called.
    await afterPendingIo();
    if (ended) break;
    if (due() > Date.now()) continue;
    killed = true;
    break;
  }
  const deadlineMs = due() - started;
  const lostMs = machine.since(lostMark);
  // A client that ended on its own ended when it did, not when this process, standing still, saw it.
  let exitAt = exitSeenAt - exitLagMs;
  if (killed) {
    await endGroup(child.pid, 500);
    await exited;
    exitAt = Date.now();
  } else {
    // Whatever the client left behind in its process group goes too.
    await endGroup(child.pid, 0);
  }
  o.signal?.removeEventListener("abort", onAbort);
  // Let the pipes drain: the outcome line may still be on its way.
  await Promise.race([pipesClosed, sleep(200)]);
  const { code, signal } = await exited;
  return {
    code,
    signal,
    killed,
    deadlineMs,
    exitAt,
    lostMs,
    exitLagMs,
    stdout,
    stderr,
    ...(spawnError ? { spawnError } : {}),
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
