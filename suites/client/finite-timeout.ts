// validation.finite-timeout: the client refuses a timeout that is not a finite positive number
// before connecting, and the timeout it takes bounds the whole request, not each read.
import type { Finding } from "../harness/check.js";
import { type ClientCheck, describeRun, expectRejected, line, notConnected } from "./context.js";
import { validResult } from "./replies.js";

/** Not finite positive numbers, as an operator might type them (1e999 overflows a double to infinity). */
const INVALID = ["0", "-1", "nan", "inf", "-inf", "1e999", "1s", "soon"];

export const checks: ClientCheck[] = [
  {
    id: "validation.finite-timeout/invalid-timeout",
    rules: ["validation.finite-timeout"],
    description:
      `Starts the client with each of ${INVALID.join(", ")} as its timeout ` +
      "(a valid reply ready should it connect).",
    note: "Refusing before connecting means exiting non-zero without opening a connection.",
    async run(ctx) {
      const runs = await Promise.all(
        INVALID.map((timeout) =>
          ctx
            .runCase({ timeout, answer: (seen) => ({ bytes: line(validResult(seen)), after: "hold" }) })
            .then((run) => ({ timeout, run })),
        ),
      );
      for (const { timeout, run } of runs) {
        if (run.connections > 0 || run.outcome === "accepted" || run.outcome === "result" || run.killed) {
          return {
            verdict: "fail",
            message: `The client took ${JSON.stringify(timeout)} as a timeout${
              run.connections ? " and connected" : ""
            }.`,
            expected: "an invalid timeout refused before connecting (exit non-zero, no connection)",
            actual: `${run.connections} connection(s); ${describeRun(run)}`,
            counterexample: `--timeout ${timeout}`,
            transcript: run.transcript,
          };
        }
      }
      return {
        verdict: "pass",
        message: `every invalid timeout (${INVALID.join(", ")}) was refused before connecting`,
      };
    },
  },
  {
    id: "validation.finite-timeout/silence",
    rules: ["validation.finite-timeout"],
    description: "Reads the client's request and never answers, keeping the connection open.",
    note: "A timeout bounds the wait for a response: a client that waits past it has no finite timeout.",
    async run(ctx) {
      const run = await ctx.runCase({ answer: () => ({ after: "hold" }) });
      return notConnected(run) ?? expectRejected(run, "silence (no reply at all)");
    },
  },
  {
    id: "validation.finite-timeout/drip-feed",
    rules: ["validation.finite-timeout"],
    description:
      "Answers with a valid result one byte at a time, spread over twice the client's timeout, " +
      "so that no single read waits long.",
    note:
      "The timeout bounds the request as a whole: a per-read timeout lets a slow peer hold the client " +
      "indefinitely (a warning).",
    async run(ctx): Promise<Finding> {
      const t = ctx.clientTimeoutMs;
      const run = await ctx.runCase({
        extraMs: 2 * t,
        answer: (seen) => {
          const bytes = line(validResult(seen));
          return { bytes, dripMs: Math.ceil((2 * t) / bytes.length), after: "hold" };
        },
      });
      const not = notConnected(run);
      if (not) return not;
      if (run.killed) return expectRejected(run, "a reply dripped over twice its timeout");
      const waited = run.afterRequestMs ?? run.elapsedMs;
      if (waited <= 1.5 * t)
        return { verdict: "pass", message: `the client gave up after ${waited} ms (timeout ${t} ms)` };
      return {
        verdict: "warn",
        message:
          `The client waited ${waited} ms for a reply dripped one byte at a time, past its timeout of ${t} ms: ` +
          "its timeout bounds each read, not the request.",
        expected: `the client gives up within about ${t} ms of sending its request`,
        actual: describeRun(run),
        transcript: run.transcript,
      };
    },
  },
];
