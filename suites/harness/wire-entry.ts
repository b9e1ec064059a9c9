// One transcript entry of a connection: the bytes as they crossed the wire, redacted, decoded and cut
// to size when read, a long send kept as a run repeated so that it can be sent again byte for byte.
import type { TranscriptEntry } from "../../protocol/verdict.js";
import type { Deferred } from "./transcript.js";

/** Strict UTF-8 that keeps a leading byte order mark (ignoreBOM), so a line's text holds every one of its bytes. */
export const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** What of a connection's options a transcript entry follows. */
export interface EntryOptions {
  /** Applied to every recorded byte (removes the token). */
  redact?: (bytes: Buffer) => Buffer;
  /** Bytes of one transcript entry kept; the rest is counted, not stored. */
  transcriptBytes?: number;
}

export type Segments = Pick<TranscriptEntry, "cuts" | "pauseMs">;

/** Bytes of one transcript entry kept. */
export const keepOf = (options: EntryOptions) => options.transcriptBytes ?? 4096;

/** Bytes as they crossed the wire, made a transcript entry (redacted, decoded, cut to size) when it is read. */
export class WireEntry implements Deferred {
  constructor(
    readonly t: number,
    private readonly dir: "send" | "recv",
    private readonly data: Buffer | string,
    /** 1 where the bytes were a line whose LF is not among them. */
    private readonly lf: number,
    private readonly options: EntryOptions,
    private readonly segments?: Segments,
  ) {}

  build(): TranscriptEntry {
    const { dir, t, lf, options } = this;
    const keep = keepOf(options);
    const bytes = typeof this.data === "string" ? Buffer.from(this.data, "utf8") : this.data;
    const clean = options.redact ? options.redact(bytes) : bytes;
    const whole = clean.length <= keep;
    const shown = whole ? clean : clean.subarray(0, keep);
    const length = bytes.length + lf;
    let entry: TranscriptEntry;
    try {
      entry = { dir, t, length, text: lf && whole ? `${strictUtf8.decode(shown)}\n` : strictUtf8.decode(shown) };
    } catch {
      entry = { dir, t, length, base64: shown.toString("base64") };
    }
    if (!whole) {
      entry.truncated = true;
      // A long request is mostly filler: kept as a run repeated, it can still be sent again byte for byte.
      const rest = dir === "send" ? repeatedRun(clean.subarray(shown.length), keep) : undefined;
      if (rest) entry.rest = rest;
    }
    return this.segments ? Object.assign(entry, this.segments) : entry;
  }
}

/**
 * The longest run a long send's omitted bytes are looked at as repeating: long enough for filler
 * made of a phrase (a large stringArg of repeated words), so such a send is still kept whole.
 */
const MAX_RUN = 32;

/** How many runs one after another a long send is looked at as (nested brackets: an opening run, a closing one). */
const MAX_RUNS = 3;

/**
 * Bytes as one run of at most MAX_RUN bytes repeated, then a tail of at most `maxTail` bytes
 * (both base64), or another such run (up to MAX_RUNS in all) before it; undefined where they are
 * not: enough to rebuild them exactly.
 */
export function repeatedRun(bytes: Buffer, maxTail: number, runs = MAX_RUNS): TranscriptEntry["rest"] {
  let best = { period: 1, covered: 0 };
  for (let period = 1; period <= MAX_RUN && period <= bytes.length && best.covered < bytes.length; period++) {
    const i = period + matchingPrefix(bytes, period);
    const covered = i - (i % period);
    if (covered > best.covered) best = { period, covered };
  }
  if (best.covered === 0) return undefined;
  if (bytes.length - best.covered > maxTail) {
    const then = runs > 1 ? repeatedRun(bytes.subarray(best.covered), maxTail, runs - 1) : undefined;
    if (!then) return undefined;
    return {
      run: bytes.subarray(0, best.period).toString("base64"),
      times: best.covered / best.period,
      tail: "",
      then,
    };
  }
  return {
    run: bytes.subarray(0, best.period).toString("base64"),
    times: best.covered / best.period,
    tail: bytes.subarray(best.covered).toString("base64"),
  };
}

/**
 * How many bytes from `shift` on equal the bytes `shift` earlier. Compared a block at a time
 * (Buffer.compare is a memcmp), as a long send is megabytes and this runs on every one.
 */
function matchingPrefix(bytes: Buffer, shift: number): number {
  const BLOCK = 4096;
  let i = shift;
  while (i < bytes.length) {
    const end = Math.min(bytes.length, i + BLOCK);
    if (bytes.compare(bytes, i - shift, end - shift, i, end) !== 0) break;
    i = end;
  }
  while (i < bytes.length && bytes[i] === bytes[i - shift]) i++;
  return i - shift;
}
