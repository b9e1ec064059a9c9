// One connection of client mode's hostile bridge: the client's request lines read as they come,
// each answered as the case asks (the first alone, or every one of a session), and the bytes each
// way kept for the case's transcript.
import type { Socket } from "node:net";
import type { TranscriptEntry } from "../../protocol/verdict.js";
import { strictUtf8 } from "../harness/connection.js";
import { afterPendingIo, machine } from "../harness/machine.js";

/** The first request line the client sent, as it arrived. */
export interface SeenRequest {
  /** The bytes before the first LF (or all that arrived, when no LF came). */
  line: Buffer;
  /**
   * lf: a complete line; closed: the client closed first; oversized: over the limit without LF;
   * waited: no LF in time.
   */
  ended: "lf" | "closed" | "oversized" | "waited";
  /** Bytes that arrived after the first LF before the answer began (a second, pipelined request). */
  after: Buffer;
  /** The request object, where the line is one. */
  request?: Record<string, unknown>;
}

/** What the tool answers once the request arrived. */
export interface Answer {
  /** Nothing: silence. */
  bytes?: Buffer;
  /** Write in segments ending at these offsets (a reply in several TCP segments). */
  splitAt?: number[];
  /**
   * Write one byte at a time, this many milliseconds apart. 0: one byte per turn of the event loop, and a
   * timer's pause only inside a multibyte character, so that every character is read in pieces while a loaded
   * machine's coarse timers do not stretch the whole reply toward the client's timeout.
   */
  dripMs?: number;
  /** After the bytes: keep the connection open, close it (FIN), or reset it (RST). */
  after: "hold" | "close" | "reset";
}

/** Where a request came in a case: its connection's number and its own on that connection, from 0. */
export interface At {
  connection: number;
  index: number;
}

export interface CaseSpec {
  /** Substituted for {host} and set as AICONTROL_HOST. Default: 127.0.0.1. */
  host?: string;
  /** Substituted for {timeout}. Default: the client's timeout in seconds. */
  timeout?: string;
  /** The answer to the request (id and method read from it where it parses). */
  answer(request: SeenRequest, at: At): Answer;
  /** Answer every request of a connection, not its first alone (while the answers hold it open). */
  session?: boolean;
  /** More environment for the client (a token for a session). */
  env?: NodeJS.ProcessEnv;
  /** After the request line, keep reading this long before answering, to see a pipelined second request. */
  observeMs?: number;
  /** Time the case needs beyond the client's timeout (a drip-feed). */
  extraMs?: number;
}

type Recorder = (dir: "send" | "recv", bytes: Buffer) => void;

export interface Peer {
  /** This connection's number in the case, from 0. */
  connection: number;
  limit: number;
  /** How long the first request may take to arrive (lengthened by the moments this process stood still). */
  waitMs: number;
  record: Recorder;
  note: (text: string) => void;
  /** Each request line as it arrives (its answer not yet written). */
  onRequest: (seen: SeenRequest) => void;
  /** The case's first request and what it is served; returns the count of bytes written, as they go. */
  onFirst: (seen: SeenRequest, served: Buffer | undefined) => ((sent: number) => void) | undefined;
}

/** Reads the connection's requests and answers them; resolves once it has nothing more to answer. */
export async function answerConnection(socket: Socket, spec: CaseSpec, peer: Peer): Promise<void> {
  const reader = lineReader(socket, peer.limit, peer.record);
  for (let index = 0; ; index++) {
    const seen = await reader.next(peer.waitMs, index === 0 ? spec.observeMs : undefined);
    readRequest(seen);
    // A session ends where the client stops sending: only the first request is judged as it ended.
    if (index > 0 && seen.ended !== "lf") return;
    peer.onRequest(seen);
    if (reader.closed()) {
      if (index === 0) peer.onFirst(seen, undefined);
      return;
    }
    const answer = spec.answer(seen, { connection: peer.connection, index });
    const bytes = answer.bytes ?? Buffer.alloc(0);
    const sent = index === 0 ? peer.onFirst(seen, bytes) : undefined;
    await writeAnswer(socket, answer, bytes, sent, reader.closed, peer.record, peer.note);
    if (!spec.session || answer.after !== "hold" || seen.ended !== "lf") return;
  }
}

/** Request lines in order: the bytes after one line's LF are the start of the next. */
function lineReader(socket: Socket, limit: number, record: Recorder) {
  let pending = Buffer.alloc(0);
  let closed = false;
  let wake: (() => void) | undefined;
  socket.on("data", (d: Buffer) => {
    if (pending.length <= limit + 1) pending = Buffer.concat([pending, d]);
    record("recv", d);
    wake?.();
  });
  socket.on("close", () => {
    closed = true;
    wake?.();
  });
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  const take = (seen: SeenRequest): SeenRequest => {
    pending = pending.subarray(seen.line.length + (seen.ended === "lf" ? 1 : 0));
    return seen;
  };
  const empty = Buffer.alloc(0);

  async function next(waitMs: number, observeMs?: number): Promise<SeenRequest> {
    // The wait for the LF is lengthened by the moments this process stood still: bytes it could not read are not late.
    const lostMark = machine.mark();
    const from = Date.now();
    const waitUntil = () => from + waitMs + machine.since(lostMark);
    for (;;) {
      const seenLength = pending.length;
      const lf = pending.indexOf(0x0a);
      if (lf !== -1 && lf <= limit) {
        const line = pending.subarray(0, lf);
        if (observeMs) {
          const until = Date.now() + observeMs;
          while (!closed && Date.now() < until) await wait(until - Date.now());
        }
        return take({ line, ended: "lf", after: pending.subarray(lf + 1) });
      }
      if (pending.length > limit)
        return take({ line: pending.subarray(0, limit + 1), ended: "oversized", after: empty });
      if (closed) return take({ line: pending, ended: "closed", after: empty });
      if (Date.now() >= waitUntil()) {
        // Bytes that came while this process stood still are read before the wait is called over.
        await afterPendingIo();
        if (pending.length !== seenLength || closed || Date.now() < waitUntil()) continue;
        return take({ line: pending, ended: "waited", after: empty });
      }
      await wait(waitUntil() - Date.now());
    }
  }
  return { next, closed: () => closed };
}

/** The case's transcript, its clock started at `started`: notes, and the bytes each way (their first 4 KiB). */
export function transcriptFrom(started: number) {
  const transcript: TranscriptEntry[] = [];
  const note = (text: string) => transcript.push({ dir: "event", t: Date.now() - started, text, length: 0 });
  const record = (dir: "send" | "recv", bytes: Buffer) => {
    const shown = bytes.subarray(0, 4096);
    const entry: TranscriptEntry = { dir, t: Date.now() - started, length: bytes.length };
    try {
      entry.text = strictUtf8.decode(shown);
    } catch {
      entry.base64 = shown.toString("base64");
    }
    if (shown.length < bytes.length) entry.truncated = true;
    transcript.push(entry);
  };
  return { transcript, note, record };
}

/** The request object on the line seen, if the line is one. */
function readRequest(seen: SeenRequest): void {
  try {
    // A byte order mark is judged by the request check alone: the answer still echoes the id behind it.
    const parsed = JSON.parse(strictUtf8.decode(seen.line).replace(/^\ufeff/, "")) as unknown;
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      seen.request = parsed as { [key: string]: unknown };
  } catch {
    // Not a request object: the answer echoes id null.
  }
}

/** Writes the case's answer as it asks (whole, a byte at a time, or in pieces), then closes or resets if it asks. */
async function writeAnswer(
  socket: Socket,
  answer: Answer,
  bytes: Buffer,
  sent: ((n: number) => void) | undefined,
  closed: () => boolean,
  record: Recorder,
  note: (text: string) => void,
): Promise<void> {
  if (answer.dripMs !== undefined) {
    for (let i = 0; i < bytes.length && !closed(); i++) {
      write(socket, bytes.subarray(i, i + 1), record);
      sent?.(1);
      if (i === bytes.length - 1) break;
      const insideCharacter = (bytes[i + 1]! & 0xc0) === 0x80;
      await (answer.dripMs > 0 || insideCharacter ? sleep(answer.dripMs) : turn());
    }
  } else if (answer.splitAt?.length) {
    let from = 0;
    for (const to of [...answer.splitAt, bytes.length]) {
      if (to <= from || closed()) continue;
      await drained(write(socket, bytes.subarray(from, to), record), socket);
      sent?.(to - from);
      from = to;
      await sleep(5);
    }
  } else if (bytes.length) {
    write(socket, bytes, record);
    sent?.(bytes.length);
  }
  if (answer.after === "close") {
    note("closed the connection (FIN)");
    socket.end();
  } else if (answer.after === "reset") {
    note("reset the connection (RST)");
    socket.resetAndDestroy();
  }
}

function write(socket: Socket, bytes: Buffer, record: Recorder): boolean {
  if (socket.destroyed) return true;
  record("send", bytes);
  return socket.write(bytes);
}

const drained = (flushed: boolean, socket: Socket) =>
  flushed || socket.destroyed ? Promise.resolve() : new Promise<void>((r) => socket.once("drain", () => r()));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
