// A failing check's case as a reproducer replays it: the steps (connections, bytes sent, replies read)
// from the report's transcript, which request is judged, and where the case cannot be re-sent, why.
import { isDeepStrictEqual } from "node:util";
import type { Contract } from "../../protocol/contract.js";
import { kindOf } from "../../protocol/oracles.js";
import type { Oracle, Rest } from "../../protocol/verdict.js";
import type { CheckReport, TranscriptEntry } from "../../reports/types.js";
import { NOTE } from "../../suites/harness/connection.js";
import { ALONGSIDE, PROBE_NOTE } from "../../suites/harness/harness.js";
import { NEAR_MISS_SHOWN, REDACTED } from "../../suites/harness/redact.js";
import { isGapNote } from "../../suites/harness/transcript.js";

export interface ExportOptions {
  contract: Contract;
  /** The environment variable the run read its token from; the scripts read it too. */
  tokenEnv: string;
  /** Whether the run had a token (the scripts then authorize as the run did). */
  tokenConfigured: boolean;
  timeoutMs: number;
}

/** What came back after a request, as the transcript recorded it. */
type Recorded =
  | { kind: "line"; text?: string; base64?: string; length: number; truncated?: true }
  | { kind: "closed" | "reset" | "timeout" | "oversized" };

type Step =
  | { op: "open"; alongside: boolean }
  | {
      op: "send";
      text?: string;
      base64?: string;
      /** A long send: after the bytes above, each `run` (base64) `times` over, then `tail` (base64). */
      runs?: { run: string; times: number }[];
      tail?: string;
      cuts?: number[];
      pause_ms?: number;
      gap_ms?: number;
      /** When the run sent it, in ms since the case began: a replay sends it no sooner. */
      at_ms?: number;
      /** An auth request whose token is the oracle's near miss of this index, applied to the token. */
      near_miss?: number;
      /** An auth request carrying the configured token: its reply tells whether the token is right. */
      auth?: true;
      judged?: true;
    }
  | { op: "half_close" }
  /** Entries the report left out (removed once the judged request is known: only a gap before it matters). */
  | { op: "gap" }
  | {
      op: "read";
      count: number;
      recorded: Recorded[];
      judged?: true;
      /**
       * The acts (the step and line of the reply that accepted each) whose completions the case first
       * saw in this reply: the check waited for them here, so a replay waits too before it goes on.
       */
      waits?: [number, number][];
    };

export interface Plan {
  steps: Step[];
  probe: boolean;
  /** Why the case cannot be re-sent as it ran, where it cannot. */
  unreproducible?: string;
  needsToken: boolean;
}

/** A marker in the tool's style standing for bytes a report does not show (besides the redacted token). */
const HIDDEN = /«[a-z][a-z ,:.-]*»/;

/** The first marker of bytes a request's text does not show, but the token and a near miss the script derives. */
const hiddenPart = (shown: string, nearMiss: boolean): string | undefined =>
  HIDDEN.exec(
    shown
      .split(REDACTED)
      .join("")
      .split(NEAR_MISS_SHOWN)
      .join(nearMiss ? "" : NEAR_MISS_SHOWN),
  )?.[0];
const OPENED = /^connection \d+ opened/;

const bytesOf = (e: TranscriptEntry): Buffer =>
  e.base64 !== undefined ? Buffer.from(e.base64, "base64") : Buffer.from(e.text ?? "", "utf8");

/** A long send's rest as a script's step holds it: its runs one after another, then the tail. */
function runsOf(rest: Rest): { runs: { run: string; times: number }[]; tail: string } {
  const runs: { run: string; times: number }[] = [];
  let at: Rest | undefined = rest;
  let tail = "";
  for (; at; at = at.then) {
    runs.push({ run: at.run, times: at.times });
    tail = at.tail;
  }
  return { runs, tail };
}

/** All the bytes of a send step. */
function sentBytes(step: Extract<Step, { op: "send" }>): Buffer {
  const head = step.base64 !== undefined ? Buffer.from(step.base64, "base64") : Buffer.from(step.text ?? "", "utf8");
  if (step.runs === undefined) return head;
  return Buffer.concat([
    head,
    ...step.runs.map(({ run, times }) => {
      const unit = Buffer.from(run, "base64");
      return Buffer.alloc(unit.length * times, unit);
    }),
    Buffer.from(step.tail ?? "", "base64"),
  ]);
}

/** Turns a recorded transcript into the steps a script replays. */
export function planOf(check: CheckReport, o: ExportOptions): Plan {
  const entries = check.transcript ?? [];
  const probeAt = entries.findIndex((e) => e.dir === "event" && e.text === PROBE_NOTE);
  const own = probeAt === -1 ? entries : entries.slice(0, probeAt);
  const plan: Plan = { steps: [], probe: probeAt !== -1, needsToken: false };
  const redacted = Buffer.from(REDACTED, "utf8");
  if (!entries.length)
    plan.unreproducible = "the report recorded no bytes of this case (no transcript, or an empty one)";
  // What the report does not hold whole matters only where it comes before the judged reply: later steps are not sent.
  const missing = new Map<Step, string>();
  const steps = plan.steps;
  let read: Extract<Step, { op: "read" }> | undefined;
  let lastSend: { entry: TranscriptEntry; step: Extract<Step, { op: "send" }> } | undefined;
  let sentSinceRead = false;
  const sentAt = new Map<Step, number>();
  let nearMisses = 0;
  for (const [i, e] of own.entries()) {
    if (e.dir === "event") {
      const text = e.text ?? "";
      if (isGapNote(text)) {
        const gap: Step = { op: "gap" };
        steps.push(gap);
        missing.set(gap, "the report keeps only the start and the end of this case's long exchange");
      } else if (OPENED.test(text)) {
        steps.push({ op: "open", alongside: text.endsWith(ALONGSIDE) });
        read = undefined;
        lastSend = undefined;
      } else if (text === NOTE.halfClosed) {
        steps.push({ op: "half_close" });
        read = undefined;
      }
      continue;
    }
    if (e.dir === "send") {
      const step: Extract<Step, { op: "send" }> = {
        op: "send",
        ...(e.base64 !== undefined ? { base64: e.base64 } : { text: e.text ?? "" }),
        ...(e.truncated && e.rest ? runsOf(e.rest) : {}),
      };
      if (e.truncated && !e.rest)
        missing.set(step, `the report keeps only the first ${bytesOf(e).length} of the ${e.length} bytes of a request`);
      const bytes = sentBytes(step);
      const shown = bytes.toString("utf8");
      // A near miss of the token is hidden, but the oracle describes it: the script derives it from the token.
      if (check.oracle?.nearMisses && isHiddenNearMiss(shown)) {
        step.near_miss = nearMisses++;
        plan.needsToken = true;
      }
      const hidden = hiddenPart(shown, step.near_miss !== undefined);
      if (hidden) missing.set(step, `the report hides part of a request (${hidden})`);
      if (step.near_miss !== undefined && step.near_miss >= (check.oracle?.nearMisses?.length ?? 0))
        missing.set(step, "the report describes fewer near misses of the token than the case sent");
      if (bytes.includes(redacted)) plan.needsToken = true;
      if (e.cuts?.length) step.cuts = e.cuts;
      if (e.t >= 1) step.at_ms = Math.round(e.t);
      if (e.pauseMs) step.pause_ms = e.pauseMs;
      // Back-to-back writes keep the pause between them: a bridge may depend on reading them apart.
      if (lastSend && sentSinceRead) {
        const busy = (lastSend.entry.cuts?.length ?? 0) * (lastSend.entry.pauseMs ?? 0);
        const gap = Math.round(e.t - lastSend.entry.t - busy);
        if (gap >= 1) step.gap_ms = Math.min(gap, o.timeoutMs);
      }
      if (isTokenAuth(e.text)) step.auth = true;
      steps.push(step);
      sentAt.set(step, i);
      lastSend = { entry: e, step };
      sentSinceRead = true;
      read = undefined;
      continue;
    }
    // A received line; one without its LF is what a closing bridge left unterminated.
    sentSinceRead = false;
    if (!read) {
      read = { op: "read", count: 0, recorded: [] };
      steps.push(read);
    }
    if (complete(e)) {
      read.count++;
      read.recorded.push({
        kind: "line",
        ...(e.base64 !== undefined ? { base64: e.base64 } : { text: (e.text ?? "").replace(/\n$/, "") }),
        length: e.length,
        ...(e.truncated ? { truncated: true as const } : {}),
      });
    }
  }
  markJudged(plan, own, check.oracle, sentAt);
  bridgeGap(plan, missing, check.oracle, o);
  const lost = plan.steps.find((s) => missing.has(s));
  if (lost) plan.unreproducible ??= missing.get(lost);
  plan.steps = plan.steps.filter((s) => s.op !== "gap");
  markWaits(plan.steps);
  if (plan.probe && o.tokenConfigured) plan.needsToken = true;
  return plan;
}

/** A recorded reply's result object, where the report holds its line whole. */
function recordedResult(r: Recorded): Record<string, unknown> | undefined {
  if (r.kind !== "line" || r.text === undefined || r.truncated) return undefined;
  try {
    const { result } = JSON.parse(r.text) as { result?: unknown };
    return result && typeof result === "object" && !Array.isArray(result)
      ? (result as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Acceptance is not completion: the check polled events until an accepted command's completion was
 * there before it went on. Each read where the case first saw an act's completion is marked with
 * that act, so a replay whose bridge is slower than the run's waits for it at the same point,
 * rather than reading on in a history the check never saw.
 */
function markWaits(steps: Step[]): void {
  const acceptedAt = new Map<unknown, [number, number]>();
  const seen = new Set<string>();
  for (const [i, step] of steps.entries()) {
    if (step.op !== "read") continue;
    const waits: [number, number][] = [];
    for (const [j, recorded] of step.recorded.entries()) {
      const result = recordedResult(recorded);
      if (result?.accepted === true && Number.isSafeInteger(result.commandSeq))
        acceptedAt.set(result.commandSeq, [i, j]);
      for (const item of Array.isArray(result?.events) ? (result.events as unknown[]) : []) {
        const event = (item as { event?: { type?: unknown; commandSeq?: unknown } } | null)?.event;
        const act = event?.type === "command_completed" ? acceptedAt.get(event.commandSeq) : undefined;
        if (act && !seen.has(`${act}`)) {
          seen.add(`${act}`);
          waits.push(act);
        }
      }
    }
    if (waits.length && !step.judged) step.waits = waits;
  }
}

/**
 * A case that made events before what it judged may leave them out of the report: where the
 * oracle says how many events the case needs, the script makes them itself and replays only what
 * came after the gap, on a fresh session where the first connection is among what was left out.
 */
function bridgeGap(plan: Plan, missing: Map<Step, string>, oracle: Oracle | undefined, o: ExportOptions): void {
  const gap = plan.steps.map((s) => s.op).lastIndexOf("gap");
  if (gap === -1 || oracle?.needsEvents === undefined) return;
  const rest = plan.steps.slice(gap + 1);
  if (rest.some((s) => missing.has(s))) return;
  const firstOpen = rest.findIndex((s) => s.op === "open");
  const firstSend = rest.findIndex((s) => s.op === "send");
  const session: Step[] =
    firstSend !== -1 && (firstOpen === -1 || firstSend < firstOpen)
      ? [
          { op: "open", alongside: false },
          ...(o.tokenConfigured
            ? [
                {
                  op: "send" as const,
                  text: `${JSON.stringify({ jsonrpc: o.contract.jsonrpc, id: "auth", method: "auth", params: { token: REDACTED } })}\n`,
                  auth: true as const,
                },
                { op: "read" as const, count: 1, recorded: [] },
              ]
            : []),
        ]
      : [];
  if (session.length > 1) plan.needsToken = true;
  // The sends after the gap keep their pace relative to one another, not to the case's start.
  const shift = Math.min(...rest.flatMap((s) => (s.op === "send" && s.at_ms !== undefined ? [s.at_ms] : [])));
  for (const s of rest) if (s.op === "send" && s.at_ms !== undefined && Number.isFinite(shift)) s.at_ms -= shift;
  plan.steps = [...session, ...rest];
}

/** Whether a recorded received line ended with its LF (one recorded at a close did not). */
function complete(e: TranscriptEntry): boolean {
  if (e.truncated) return true;
  if (e.text !== undefined) return e.text.endsWith("\n");
  return Buffer.from(e.base64 ?? "", "base64").length < e.length;
}

/** An auth request whose token the report shows as the hidden near miss. */
function isHiddenNearMiss(text: string): boolean {
  try {
    const r = JSON.parse(text) as { method?: unknown; params?: { token?: unknown } };
    return r.method === "auth" && r.params?.token === NEAR_MISS_SHOWN;
  } catch {
    return false;
  }
}

function isTokenAuth(text: string | undefined): boolean {
  try {
    const r = JSON.parse(text ?? "") as { method?: unknown; params?: { token?: unknown } };
    return r.method === "auth" && r.params?.token === REDACTED;
  } catch {
    return false;
  }
}

/**
 * The request judged is the oracle's `at` (the last request with that id), or else the case's
 * last: its first reply is what the oracle or the comparison is about. Where the transcript read
 * nothing after it, a read is added; what the case did after that read is not replayed.
 */
function markJudged(plan: Plan, own: TranscriptEntry[], oracle: Oracle | undefined, sentAt: Map<Step, number>): void {
  const steps = plan.steps;
  const sends = steps.flatMap((s, i) => (s.op === "send" ? [i] : []));
  const atId = oracle?.at ?? (oracle && kindOf(oracle).judgedId?.(oracle));
  const at =
    atId === undefined
      ? sends.at(-1)
      : sends
          .filter((i) =>
            requestIds(sentBytes(steps[i] as Extract<Step, { op: "send" }>)).some((id) => isDeepStrictEqual(id, atId)),
          )
          .at(-1);
  if (at === undefined) {
    plan.unreproducible ??=
      atId === undefined
        ? "the case sent nothing the report recorded"
        : `the report holds no request with the id ${JSON.stringify(atId)} the check judged`;
    return;
  }
  const send = steps[at] as Extract<Step, { op: "send" }>;
  send.judged = true;
  let readAt = at + 1;
  while (steps[readAt]?.op === "half_close") readAt++;
  let read = steps[readAt];
  if (read?.op !== "read") {
    read = { op: "read", count: 0, recorded: [] };
    steps.splice(readAt, 0, read);
  }
  read.judged = true;
  steps.length = readAt + 1;
  // How the exchange after the judged request ended, where fewer lines came than were read.
  const from = sentAt.get(send)! + 1;
  const nextSend = own.findIndex((e, i) => i >= from && e.dir === "send");
  const after = own.slice(from, nextSend === -1 ? undefined : nextSend);
  const end = after.find(
    (e) =>
      (e.dir === "recv" && !complete(e)) ||
      (e.dir === "event" &&
        (e.text === NOTE.peerFin || e.text?.startsWith(NOTE.socketError) || e.text?.startsWith(NOTE.oversized))),
  );
  const kind: Recorded["kind"] = !end
    ? "timeout"
    : end.dir === "recv" || end.text === NOTE.peerFin
      ? "closed"
      : end.text?.startsWith(NOTE.socketError)
        ? "reset"
        : "oversized";
  // Without an oracle the replies are compared: as many are read as the request has lines, so a fixed bridge
  // shows; an oracle on the order of the replies reads one per id.
  const lines = !oracle
    ? sentBytes(send).reduce((n, x) => n + (x === 0x0a ? 1 : 0), 0)
    : (kindOf(oracle).replies?.(oracle) ?? 0);
  read.count = Math.max(1, read.recorded.length, lines);
  // Fewer lines came than are read: then came the end recorded (or nothing within the timeout).
  if (read.recorded.length < read.count) read.recorded.push({ kind });
}

/** The ids of the complete request lines among `bytes` (a line that is not a JSON object has none). */
function requestIds(bytes: Buffer): unknown[] {
  return bytes
    .toString("utf8")
    .split("\n")
    .slice(0, -1)
    .flatMap((line) => {
      try {
        const value = JSON.parse(line) as unknown;
        return value && typeof value === "object" && "id" in value ? [(value as { id: unknown }).id] : [];
      } catch {
        return [];
      }
    });
}
