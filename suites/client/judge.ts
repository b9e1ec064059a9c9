// How client mode judges what a client did with what it was served: rejected, accepted, or
// surfaced as a remote error, in time; and the bytes of what it was served, for counterexamples.
import type { RuleId } from "../../protocol/contract.js";
import { clip, type Finding } from "../harness/check.js";
import type { CaseRun, SeenRequest } from "./context.js";

/** The client's own words on how it ended, or its exit status, for "actual". */
export function describeRun(run: CaseRun): string {
  const how = run.killed
    ? `still running after ${run.deadlineMs} ms, so killed`
    : run.reported
      ? `reported ${run.reported} (exit ${run.signal ?? run.exitCode})`
      : run.exitCode === 0
        ? "exited 0 (accepted)"
        : `exited ${run.signal ?? run.exitCode} (rejected)`;
  const err = run.stderr ? `; stderr: ${clip(run.stderr.split("\n").slice(-3).join(" | "), 200)}` : "";
  const lost = run.lostMs ? ` (this tool stood still for ${run.lostMs} ms of it)` : "";
  return `${how} after ${run.elapsedMs} ms${lost}${err}`;
}

/** Printable ASCII as is, every other byte as \xHH; long payloads cut. */
export function showBytes(bytes: Buffer | undefined, max = 200): string {
  if (!bytes) return "(nothing)";
  const head = [...bytes.subarray(0, max)]
    .map((b) =>
      b >= 0x20 && b < 0x7f && b !== 0x5c
        ? String.fromCharCode(b)
        : `\\x${b.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");
  return bytes.length > max ? `${head}… (${bytes.length} bytes)` : head;
}

/** Times a case is served where this machine, not the client, spoiled it, before a check says it is out of reach. */
const SERVE_TRIES = 3;

/**
 * The case served again while `spoiled` says this machine spoiled it, up to SERVE_TRIES times: the last run, or where
 * every try was spoiled, a skip that names the machine, `what` saying what could not be served and how the last try went.
 */
export async function servedFairly(
  serve: () => Promise<CaseRun>,
  spoiled: (run: CaseRun) => boolean,
  what: (run: CaseRun) => string,
): Promise<CaseRun | Finding> {
  let run = await serve();
  for (let tries = 1; spoiled(run) && tries < SERVE_TRIES; tries++) run = await serve();
  if (!spoiled(run)) return run;
  return {
    verdict: "skip",
    reasonKind: "out-of-reach",
    message: `${what(run)}, in each of ${SERVE_TRIES} tries: this machine was too busy to serve it`,
  };
}

/** A case that needs the client's request cannot be judged when it never connected. */
export function notConnected(run: CaseRun): Finding | undefined {
  if (run.connections > 0 || run.killed) return undefined;
  return {
    verdict: "error",
    message:
      "The client never connected, so this case cannot be judged: does the --exec command use " +
      "{host} and {port} (or AICONTROL_HOST and AICONTROL_PORT)?",
    actual: describeRun(run),
    transcript: run.transcript,
  };
}

const killedFinding = (run: CaseRun, what: string, rules?: RuleId[]): Finding => ({
  verdict: "fail",
  message:
    `The client was still running ${run.deadlineMs} ms after it started (${what}): ` +
    "every wait must be bounded by its timeout.",
  expected: "the client ends on its own within its timeout",
  actual: describeRun(run),
  transcript: run.transcript,
  timed: true,
  ...(rules ? { rules } : {}),
});

/** The client must reject what was served: exit non-zero, or report "rejected". */
export function expectRejected(run: CaseRun, what: string, rules?: RuleId[]): Finding {
  if (run.killed) return killedFinding(run, what, rules);
  if (run.outcome === "rejected") return { verdict: "pass", message: `rejected ${what}` };
  return {
    verdict: "fail",
    message: `The client took ${what} as ${run.outcome === "remote-error" ? "a remote error" : "a valid response"}.`,
    expected: `${what} rejected (a non-zero exit, or AICONTROL_OUTCOME "rejected")`,
    actual: describeRun(run),
    counterexample: showBytes(run.served),
    transcript: run.transcript,
    ...(rules ? { rules } : {}),
  };
}

/** The client must accept what was served as its result. */
export function expectAccepted(run: CaseRun, what: string, rules?: RuleId[]): Finding {
  if (run.killed) return killedFinding(run, what, rules);
  if (run.outcome === "result" || run.outcome === "accepted") return { verdict: "pass", message: `accepted ${what}` };
  return {
    verdict: "fail",
    message: `The client did not accept ${what}.`,
    expected: `${what} accepted as the request's result (exit 0, or AICONTROL_OUTCOME "result")`,
    actual: describeRun(run),
    counterexample: showBytes(run.served),
    transcript: run.transcript,
    ...(rules ? { rules } : {}),
  };
}

export const NEEDS_OUTCOME =
  "the client prints no AICONTROL_OUTCOME line, so a surfaced remote error cannot be told from a rejected reply " +
  '(print AICONTROL_OUTCOME {"kind":"result"|"remote-error"|"rejected"} on stdout)';

/** The client must surface what was served as the remote error it is; without an outcome line, skip. */
export function expectRemoteError(run: CaseRun, what: string, rules?: RuleId[]): Finding {
  if (run.killed) return killedFinding(run, what, rules);
  if (!run.reported) return { verdict: "skip", message: NEEDS_OUTCOME, reasonKind: "not-observable" };
  if (run.reported === "remote-error") return { verdict: "pass", message: `surfaced ${what}` };
  return {
    verdict: "fail",
    message: `The client did not surface ${what} as a remote error.`,
    expected: `${what} reported as a remote error (AICONTROL_OUTCOME "remote-error")`,
    actual: describeRun(run),
    counterexample: showBytes(run.served),
    transcript: run.transcript,
    ...(rules ? { rules } : {}),
  };
}

/** The id to echo: the request's, or null where the request has none or is unreadable. */
export const requestIdOf = (seen: SeenRequest): unknown =>
  seen.request && "id" in seen.request ? seen.request.id : null;

/** The method the client asked for ("" where unreadable). */
export const methodOf = (seen: SeenRequest): string =>
  typeof seen.request?.method === "string" ? seen.request.method : "";

/** Bytes of a reply line: text (or bytes) and the LF. */
export const line = (text: string | Buffer): Buffer =>
  Buffer.concat([typeof text === "string" ? Buffer.from(text, "utf8") : text, Buffer.from("\n")]);
