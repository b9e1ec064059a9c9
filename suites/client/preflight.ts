// Before any check: does the client command connect at all? A command that cannot start, or that
// ignores {host} and {port}, would make every case "never connected"; that is one root cause.
import { type ClientContext, describeRun, line } from "./context.js";
import { validResult } from "./replies.js";

/** Why no case can be judged, or undefined when the client connected and sent something. */
export async function preflight(ctx: ClientContext): Promise<string | undefined> {
  const run = await ctx.runCase({ answer: (seen) => ({ bytes: line(validResult(seen)), after: "hold" }) });
  if (run.connections > 0) return undefined;
  return (
    `the client never connected when given a valid host, port and timeout (${describeRun(run)}): ` +
    "does the --exec command start it, and does it use {host} and {port} (or AICONTROL_HOST and AICONTROL_PORT)?"
  );
}
