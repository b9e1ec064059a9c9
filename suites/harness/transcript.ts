import type { TranscriptEntry } from "../../protocol/verdict.js";

/** The note standing for the entries a long transcript leaves out (read back by a replay, which cannot fill them in). */
export const gapNote = (left: number) => `… ${left} entries left out …`;
export const isGapNote = (text: string) => /^… \d+ entries left out …$/.test(text);

/**
 * An entry not built yet: redacting and decoding the bytes waits until the transcript is read. Most cases pass and
 * theirs is never read, and a round trip's bookkeeping is then only this.
 */
export interface Deferred {
  t: number;
  build(): TranscriptEntry;
}

/**
 * A case's transcript as a report shows it: the first `head` entries and the last `tail`, with a note of how many
 * came between. Only those are kept while the case runs, so a case of a million round trips costs no more memory
 * than one of two hundred, and the entries it keeps do not all stay live for the garbage collector to copy.
 */
export class Transcript {
  private readonly first: (TranscriptEntry | Deferred)[] = [];
  private readonly last: (TranscriptEntry | Deferred)[] = [];
  private left = 0;
  /** When the first entry left out was recorded. */
  private leftAt = 0;

  constructor(
    private readonly head = 150,
    private readonly tail = 50,
  ) {}

  push(entry: TranscriptEntry | Deferred): void {
    if (this.first.length < this.head) {
      this.first.push(entry);
      return;
    }
    this.last.push(entry);
    if (this.last.length <= this.tail) return;
    const gone = this.last.shift()!;
    if (this.left++ === 0) this.leftAt = gone.t;
  }

  entries(): TranscriptEntry[] {
    const first = this.first.map(built);
    const last = this.last.map(built);
    if (this.left === 0) return [...first, ...last];
    const gap: TranscriptEntry = { dir: "event", t: this.leftAt, text: gapNote(this.left), length: 0 };
    return [...first, gap, ...last];
  }
}

const built = (entry: TranscriptEntry | Deferred): TranscriptEntry => ("build" in entry ? entry.build() : entry);
