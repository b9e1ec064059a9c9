// What the machine itself lost: moments this process did not run (a loaded machine, a collector's
// pause, a long synchronous task). A wait whose verdict rests on time is lengthened by them: a reply
// or an exit that could not be seen while this process stood still is not a peer that was late.
// See docs/ARCHITECTURE.md, "Time on a busy machine".

import { readdirSync, readFileSync } from "node:fs";

/** How often the event loop is sampled. */
const TICK_MS = 20;
/** A tick this much later than planned was a moment the loop did not run; shorter delays are the timer's noise. */
const STALL_MS = 40;

export interface MachineWait {
  until: number;
  ms: number;
  mark: number;
}

/**
 * Milliseconds this process's main thread has waited for a CPU while ready to run, where the system says (Linux's
 * schedstat): on a loaded machine most of what it loses comes in slices too short for a late tick to show.
 */
export function runQueueMs(): number | undefined {
  try {
    const waited = Number(readFileSync("/proc/self/schedstat", "utf8").split(" ")[1]);
    return Number.isFinite(waited) ? waited / 1e6 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a bridge's processes have had of the CPUs, as read at one moment, in ms: the process tree rooted at `pid`, its
 * time waiting for a CPU while ready to run (`waitMs`) and running on one (`runMs`).
 */
export interface BridgeCpu {
  pid: number;
  waitMs: number;
  runMs: number;
}

/**
 * What the threads of process `pid` and of its descendants have had of the CPUs, summed (Linux's schedstat);
 * undefined where the system does not say, or a thread ended while it was read.
 */
export function treeSchedstat(pid: number): BridgeCpu | undefined {
  const sum = { pid, waitMs: 0, runMs: 0 };
  const processes = [pid];
  try {
    for (let p = processes.pop(); p !== undefined; p = processes.pop()) {
      for (const tid of readdirSync(`/proc/${p}/task`)) {
        const [run, wait] = readFileSync(`/proc/${p}/task/${tid}/schedstat`, "utf8").split(" ").map(Number);
        sum.runMs += run! / 1e6;
        sum.waitMs += wait! / 1e6;
        for (const child of readFileSync(`/proc/${p}/task/${tid}/children`, "utf8").split(" "))
          if (child.trim()) processes.push(Number(child));
      }
    }
  } catch {
    return undefined;
  }
  return Number.isFinite(sum.runMs + sum.waitMs) ? sum : undefined;
}

/**
 * The event loop's lost time, sampled by a timer that keeps no process alive. Each tick counts the larger of its
 * lateness (a stall: this process ran something else, or did not run) and the time it waited for a CPU: they
 * overlap, so adding them would count a descheduled moment twice.
 */
export class Machine {
  private lostMs = 0;
  /** Of lostMs, the stalls alone. */
  private stalledMs = 0;
  private planned = 0;
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The last stall the sampler saw end: when, and how long it was. */
  private lastStall = { at: 0, ms: 0 };

  constructor(private readonly waitedForCpu: () => number | undefined = runQueueMs) {}

  /**
   * Milliseconds this process has stood still since it started measuring, the tick under way included; `cheap`
   * leaves out the tick's time queued for a CPU, which costs a read of the system's counters (a mark taken on every
   * round trip then counts at most one tick's queueing more as lost).
   */
  lost(now = Date.now(), cheap = false): number {
    if (!this.timer) this.start(now);
    const late = now - this.planned;
    return this.lostMs + Math.max(late > STALL_MS ? late : 0, cheap ? 0 : this.queuedSinceTick());
  }

  /**
   * Of what was lost, the stalls alone (ticks more than STALL_MS late, the tick under way included): moments in which
   * not only this process may have stood still, but the whole machine.
   */
  stalls(now = Date.now()): number {
    if (!this.timer) this.start(now);
    const late = now - this.planned;
    return this.stalledMs + (late > STALL_MS ? late : 0);
  }

  /** A mark to measure from: `since(mark)` is what was lost after it. */
  mark(): number {
    return this.lost();
  }

  since(mark: number, now = Date.now()): number {
    return Math.max(0, this.lost(now) - mark);
  }

  /** A wait of `ms` from `now`, to be lengthened by what this process loses while it runs. */
  wait(ms: number, now = Date.now()): MachineWait {
    return { until: now + ms, ms, mark: this.lost(now, true) };
  }

  /** What the wait has left: lengthened by the stalls since it began, at most by its own length and by `most`. */
  left(w: MachineWait, most: number, now = Date.now()): number {
    return w.until + Math.min(w.ms, most, this.since(w.mark, now)) - now;
  }

  /**
   * How late this moment's callback runs: the stall under way, or one that ended in this turn of the loop. I/O seen
   * now (a child's exit) may have happened that much earlier.
   */
  stalledAt(now = Date.now()): number {
    if (!this.timer) this.start(now);
    const late = now - this.planned;
    if (late > STALL_MS) return late;
    return now - this.lastStall.at <= TICK_MS ? this.lastStall.ms : 0;
  }

  /** Time waited for a CPU since the last tick (0 where the system does not say); `tick` starts the next count. */
  private queuedSinceTick(tick = false): number {
    const queued = this.waitedForCpu();
    if (queued === undefined) return 0;
    const waited = Math.max(0, queued - this.queued);
    if (tick) this.queued = queued;
    return waited;
  }

  private start(now: number): void {
    this.planned = now + TICK_MS;
    this.queued = this.waitedForCpu() ?? 0;
    this.timer = setInterval(() => {
      const at = Date.now();
      const late = at - this.planned;
      const stalled = late > STALL_MS ? late : 0;
      if (stalled) this.lastStall = { at, ms: late };
      this.stalledMs += stalled;
      this.lostMs += Math.max(stalled, this.queuedSinceTick(true));
      this.planned = at + TICK_MS;
    }, TICK_MS).unref();
  }
}

/** The one measure of the machine every wait shares. */
export const machine = new Machine();

/**
 * The share of the time measured a bridge's processes must have run for their wait for a CPU to be taken for the
 * bridge's: a bridge serving a check's traffic runs several times that; a client that only had it started, hardly.
 */
const RAN_SHARE = 0.01;

/**
 * What slowed a bridge from now on, for a pace read off its completions: the milliseconds this process lost, but no
 * more than the bridge's own processes waited for a CPU, and this process's stalls, where that is known (`bridge`, a
 * bridge this tool started). A game loop that sleeps between its steps keeps its pace while this process waits for a
 * CPU: crediting it with that wait would make it look faster than it is. A stall may be the whole machine's, so it is
 * credited. Where the processes started did not run meanwhile, they are not the bridge (a client that had a container
 * start it), and where the bridge was started afresh it is another process: this process's loss then.
 */
export function bridgeLoss(bridge?: () => BridgeCpu | undefined, measure: Machine = machine): () => number {
  const mark = measure.mark();
  const stalled = measure.stalls();
  const t0 = Date.now();
  const from = bridge?.();
  let read: { at: number; ms?: number } = { at: 0 };
  return () => {
    const lost = measure.since(mark);
    if (!from) return lost;
    // Read again at most once a tick: each read walks the bridge's processes.
    const now = Date.now();
    if (now - read.at >= TICK_MS) {
      const to = bridge!();
      const ran = to?.pid === from.pid && to.runMs - from.runMs >= Math.max(1, (now - t0) * RAN_SHARE);
      read = { at: now, ...(ran ? { ms: Math.max(0, to.waitMs - from.waitMs) } : {}) };
    }
    return read.ms === undefined ? lost : Math.min(lost, read.ms + measure.stalls() - stalled);
  };
}

/** Lets the poll phase run once: I/O (a reply, a child's exit) that came while the loop stood still is seen. */
export const afterPendingIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
