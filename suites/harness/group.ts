// Ending a process group (a spawned bridge, a client under test) with nothing of it left running: the
// shell that ran a command may exit before what it started, and a killed process takes a moment to go.
import { readdirSync, readFileSync } from "node:fs";

/** Whether any process of group `pgid` still runs; a zombie waiting for its parent to reap it does not. */
export function groupRuns(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  if (process.platform !== "linux") return true;
  for (const name of readdirSync("/proc")) {
    if (name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone since the listing
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so fields are read after the last ")".
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}

/** Sends `signal` to the group; false once the group is gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGTERM to the group, SIGKILL to what runs after `graceMs`; resolves once nothing of it runs. A process
 * that outlives even SIGKILL (uninterruptible) is not waited for past another grace period.
 */
export async function endGroup(pgid: number | undefined, graceMs: number): Promise<void> {
  if (pgid === undefined || !signalGroup(pgid, "SIGTERM")) return;
  const killAt = Date.now() + graceMs;
  const giveUpAt = killAt + Math.max(graceMs, 1000);
  while (groupRuns(pgid) && Date.now() < giveUpAt) {
    if (Date.now() >= killAt) signalGroup(pgid, "SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
