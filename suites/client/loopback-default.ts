// security.loopback-default: a client refuses a non-loopback endpoint unless the operator opted in.
import type { ClientCheck } from "./context.js";
import { describeRun, line } from "./judge.js";
import { validResult } from "./replies.js";

/**
 * Not a loopback address, yet on Linux a connection to it reaches only this machine (the tool's
 * listener), so nothing leaves the host whatever the client does. Never any other address.
 */
const NON_LOOPBACK = "0.0.0.0";

const READY = "a valid reply ready should it connect";

export const checks: ClientCheck[] = [
  {
    id: "security.loopback-default/any-address",
    rules: ["security.loopback-default"],
    description: `Starts the client with ${NON_LOOPBACK} as its host (no opt-in), ${READY}.`,
    note:
      `${NON_LOOPBACK} is not a loopback address: ` +
      "without an explicit opt-in the client refuses it before connecting.",
    async run(ctx) {
      const run = await ctx.runCase({
        host: NON_LOOPBACK,
        answer: (seen) => ({ bytes: line(validResult(seen)), after: "hold" }),
      });
      if (run.connections === 0 && !run.killed && run.outcome !== "accepted" && run.outcome !== "result")
        return { verdict: "pass", message: `the client refused ${NON_LOOPBACK} without connecting` };
      return {
        verdict: "fail",
        message: run.connections
          ? `The client connected to ${NON_LOOPBACK}, a non-loopback address, without an opt-in.`
          : `The client did not refuse ${NON_LOOPBACK} (it exited without an error).`,
        expected: "a non-loopback host refused before connecting (exit non-zero, no connection)",
        actual: `${run.connections} connection(s); ${describeRun(run)}`,
        transcript: run.transcript,
        ...(run.killed && !run.connections ? { timed: true } : {}),
      };
    },
  },
];
