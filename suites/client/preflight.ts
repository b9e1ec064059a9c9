// Before any check: does the client command connect at all? A command that cannot start, or that
// ignores {host} and {port}, would make every case "never connected"; that is one root cause.
import { clip } from "../harness/check.js";
import type { CaseRun, ClientContext } from "./context.js";
import { describeRun, line } from "./judge.js";
import { validResult } from "./replies.js";

/** Why no case can be judged. */
export interface Blocked {
  problem: string;
  /**
   * The command never ran: no shell could be spawned, or the shell found no such command (exit 127)
   * or could not execute it (exit 126). Otherwise it ran and did not connect: the client's doing.
   */
  unstartable: boolean;
}

/** The POSIX shell's own exit statuses for a command it could not run. */
const NOT_RUN: Readonly<Record<number, string>> = { 126: "not executable", 127: "command not found" };

/** Why no case can be judged, or undefined when the client connected and sent something. */
export async function preflight(ctx: ClientContext): Promise<Blocked | undefined> {
  const run = await ctx.runCase({ answer: (seen) => ({ bytes: line(validResult(seen)), after: "hold" }) });
  if (run.connections > 0) return undefined;
  const notRun = notStarted(run);
  if (notRun)
    return { unstartable: true, problem: `the client command ${JSON.stringify(ctx.options.command)} ${notRun}` };
  return {
    unstartable: false,
    problem:
      `the client never connected when given a valid host, port and timeout (${describeRun(run)}): ` +
      "does the --exec command start it, and does it use {host} and {port} (or AICONTROL_HOST and AICONTROL_PORT)?",
  };
}

/** How the command failed to start, or undefined where it ran. */
function notStarted(run: CaseRun): string | undefined {
  if (run.spawnError) return `could not be started: no shell could be spawned (${run.spawnError})`;
  const why = run.exitCode === null || run.killed ? undefined : NOT_RUN[run.exitCode];
  if (!why) return undefined;
  const err = run.stderr ? `: ${clip(run.stderr.split("\n").slice(-3).join(" | "), 200)}` : "";
  return `could not be started: the shell exited ${run.exitCode} (${why})${err}`;
}
