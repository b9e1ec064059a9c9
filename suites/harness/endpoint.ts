// How the harness reaches the bridge: what the runner's targets (runner/targets.ts) provide.
import type { BridgeCpu } from "./machine.js";

/** How a restart is asked for. */
export interface RestartOptions {
  /**
   * Restart even a bridge nothing has connected to since it started: the caller found it no
   * longer serving, and a bridge that stopped on its own is started again, fresh or not.
   */
  force?: boolean;
}

/** How the harness reaches the bridge; the runner provides it. */
export interface Endpoint {
  host: string;
  port: number;
  /**
   * Starts a bridge this tool owns afresh; absent for an endpoint it does not. One that is
   * `fresh` is kept as it is, unless `force`: it is already what a restart would make, and every caller that wants a
   * fresh bridge gets one start, not one each.
   */
  restart?(options?: RestartOptions): Promise<void>;
  /**
   * Set while a bridge this tool started has had no connection since: no request has changed
   * its state. The harness clears it as it connects.
   */
  fresh?: boolean;
  /** Time spent restarting it so far, where it restarts (so shrinking can tell its own time from the restarts'). */
  restartMs?: number;
  /** What the bridge's processes have had of the CPUs so far, where this tool started them and the system says. */
  cpu?(): BridgeCpu | undefined;
}
