// validation.finite-timeout: the client refuses a timeout that is not a finite positive number
// before connecting, and the timeout it takes bounds the whole request, not each read.
import type { Finding } from "../harness/check.js";
import type { CaseRun, ClientCheck } from "./context.js";
import { describeRun, expectRejected, line, notConnected, servedFairly } from "./judge.js";
import { validResult } from "./replies.js";

/**
 * How long past its timeout a client may take to notice and exit (timers and process exit are not
 * instant, least of all with other clients starting alongside) before it counts as waiting on.
 */
export const slackMs = (timeoutMs: number) => Math.max(timeoutMs / 2, 500);

/**
 * A client that gave up on silence, but only well after its timeout: a warning naming how long it waited (from the request's
 * arrival to the exit, less a stall of this tool just before it saw the exit: see process.ts).
 */
function waitedPast(run: CaseRun, t: number, what: string, why: string): Finding | undefined {
  const waited = run.afterRequestMs ?? run.elapsedMs;
  if (waited <= t + slackMs(t)) return undefined;
  return {
    verdict: "warn",
    message: `The client waited ${waited} ms for ${what}, past its timeout of ${t} ms: ${why}.`,
    expected: `the client gives up within about ${t} ms of sending its request`,
    actual: describeRun(run),
    transcript: run.transcript,
    timed: true,
  };
}

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
      if (!ctx.options.command.includes("{timeout}"))
        return {
          verdict: "skip",
          reasonKind: "out-of-reach",
          message: "the --exec command has no {timeout} placeholder, so no timeout can be given to the client",
        };
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
            ...(run.killed && run.connections === 0 ? { timed: true } : {}),
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
    note:
      "A timeout bounds the wait for a response: a client still waiting at the case's deadline has no finite " +
      "timeout (a failure); one that gives up well after its timeout, a warning.",
    async run(ctx) {
      const run = await ctx.runCase({ answer: () => ({ after: "hold" }) });
      const finding = notConnected(run) ?? expectRejected(run, "silence (no reply at all)");
      if (finding.verdict !== "pass") return finding;
      return (
        waitedPast(run, ctx.clientTimeoutMs, "a reply that never came", "its timeout does not bound its wait") ??
        finding
      );
    },
  },
  {
    id: "validation.finite-timeout/drip-feed",
    rules: ["validation.finite-timeout"],
    description:
      "Answers with a valid result one byte at a time, spread over at least twice the client's timeout, " +
      "so that no single read waits long.",
    note:
      "The timeout bounds the request as a whole: a per-read timeout lets a slow peer hold the client " +
      "indefinitely (a warning).",
    async run(ctx): Promise<Finding> {
      const t = ctx.clientTimeoutMs;
      // Long enough that a client bounded by its timeout is plainly done before the last byte.
      const spreadMs = t + 2 * slackMs(t);
      const drip = () =>
        ctx.runCase({
          extraMs: spreadMs,
          answer: (seen) => {
            const bytes = line(validResult(seen));
            return { bytes, dripMs: Math.ceil(spreadMs / bytes.length), after: "hold" };
          },
        });
      // A client that left early is judged only where no pause of the drip came near its timeout: a pause this tool
      // made on a busy machine would have ended a per-read timeout too.
      const uneven = (r: CaseRun) =>
        r.unsentAtExit !== undefined && r.unsentAtExit > 0 && (r.longestPauseMs ?? 0) > t / 2;
      const run = await servedFairly(
        drip,
        uneven,
        (r) =>
          `the drip could not be served evenly (a pause of ${r.longestPauseMs} ms between two bytes, against a ` +
          `timeout of ${t} ms, would end a per-read timeout too)`,
      );
      if ("verdict" in run) return run;
      const not = notConnected(run);
      if (not) return not;
      if (run.killed) return expectRejected(run, `a reply dripped over ${spreadMs} ms`);
      const waited = run.afterRequestMs ?? run.elapsedMs;
      // Judged by order, not by a duration: a client whose timeout bounds the request leaves before the last byte,
      // which comes twice its timeout after the first; one that stayed for every byte let the reads bound its wait.
      if (run.unsentAtExit === 0)
        return {
          verdict: "warn",
          message:
            `The client stayed ${waited} ms for a reply dripped one byte at a time, until its last byte, past its ` +
            `timeout of ${t} ms: its timeout bounds each read, not the request.`,
          expected: `the client gives up within about ${t} ms of sending its request, before the reply is complete`,
          actual: describeRun(run),
          transcript: run.transcript,
          timed: true,
        };
      return { verdict: "pass", message: `the client gave up after ${waited} ms (timeout ${t} ms)` };
    },
  },
];
