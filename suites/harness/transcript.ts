import type { TranscriptEntry } from "../../protocol/verdict.js";

/** The note standing for the entries a long transcript leaves out (read back by a replay, which cannot fill them in). */
export const gapNote = (left: number) => `… ${left} entries left out …`;
export const isGapNote = (text: string) => /^… \d+ entries left out …$/.test(text);

/**
 * A case's transcript as a report shows it: the first `head` entries and the last `tail`, with a note of how many
 * came between. Only those are kept while the case runs, so a case of a million round trips costs no more memory
 * than one of two hundred, and the entries it keeps do not all stay live for the garbage collector to copy.
 */
export class Transcript {
  private readonly first: TranscriptEntry[] = [];
  private readonly last: TranscriptEntry[] = [];
  private left = 0;
  /** When the first entry left out was recorded. */
  private leftAt = 0;

  constructor(
    private readonly head = 150,
    private readonly tail = 50,
  ) {}

  push(entry: TranscriptEntry): void {
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
    if (this.left === 0) return [...this.first, ...this.last];
    const gap: TranscriptEntry = { dir: "event", t: this.leftAt, text: gapNote(this.left), length: 0 };
    return [...this.first, gap, ...this.last];
  }
}
