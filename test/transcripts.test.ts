import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repeatedRun } from "../suites/harness/connection.js";
import { REDACTED, redactor } from "../suites/harness/redact.js";
import { isGapNote, Transcript } from "../suites/harness/transcript.js";

describe("token redaction", () => {
  it("replaces a token and its JSON-escaped form everywhere in a value", () => {
    const token = 'pa"ss\\word-long';
    const value = { a: `x ${token} y`, b: [JSON.stringify({ token })], c: 3 };
    const out = JSON.stringify(redactor(token).deep(value));
    expect(out).not.toContain('pa\\"ss');
    expect(out.split(REDACTED).length - 1).toBe(2);
  });

  it("is idempotent", () => {
    const r = redactor("secret-token-1");
    const once = r.text("a secret-token-1 b");
    expect(r.text(once)).toBe(once);
    expect(once).toBe(`a ${REDACTED} b`);
  });

  it("redacts bytes on the wire, valid UTF-8 or not", () => {
    const r = redactor("abc123-token");
    expect(r.bytes(Buffer.from('{"token":"abc123-token"}')).toString()).toBe(`{"token":"${REDACTED}"}`);
    const raw = Buffer.concat([Buffer.from([0xff, 0xc0]), Buffer.from("abc123-token")]);
    expect(r.bytes(raw).subarray(2).toString()).toBe(REDACTED);
  });

  it("does not shred ordinary text for a short token, yet hides it where it stands alone", () => {
    const r = redactor("t");
    expect(r.text("the bridge stopped at token t")).toBe(`the bridge stopped at token ${REDACTED}`);
    expect(r.text('{"token":"t"}')).toBe(`{"token":"${REDACTED}"}`);
    expect(r.bytes(Buffer.from('{"token":"t","text":"tty"}')).toString()).toBe(`{"token":"${REDACTED}","text":"tty"}`);
  });
});

describe("transcripts", () => {
  const entry = (i: number) => ({ dir: "send" as const, t: i, text: String(i), length: 1 });

  it("keep the start and the end of a long case, and say how much was left out", () => {
    const transcript = new Transcript();
    for (let i = 0; i < 500; i++) transcript.push(entry(i));
    const kept = transcript.entries();
    expect(kept).toHaveLength(201);
    expect(kept[149]!.text).toBe("149");
    expect(kept[150]).toMatchObject({ dir: "event", t: 150, text: "… 300 entries left out …" });
    expect(isGapNote(kept[150]!.text!)).toBe(true);
    expect(kept[151]!.text).toBe("450");
    expect(kept.at(-1)!.text).toBe("499");
  });

  it("are the entries in order, head and tail, for any length", () => {
    fc.assert(
      fc.property(fc.nat(40), fc.nat(5), fc.nat(5), (n, head, tail) => {
        const transcript = new Transcript(head, tail);
        const all = Array.from({ length: n }, (_, i) => entry(i));
        for (const e of all) transcript.push(e);
        const kept = transcript.entries();
        if (n <= head + tail) {
          expect(kept).toEqual(all);
          return;
        }
        expect(kept.slice(0, head)).toEqual(all.slice(0, head));
        expect(kept[head]).toEqual({
          dir: "event",
          t: head,
          text: `… ${n - head - tail} entries left out …`,
          length: 0,
        });
        expect(kept.slice(head + 1)).toEqual(all.slice(n - tail));
      }),
    );
  });
});

describe("a long send kept as a repeated run", () => {
  /** Rebuilds the bytes the way a replay does: the run `times` times, then the tail. */
  const rebuild = (rest: NonNullable<ReturnType<typeof repeatedRun>>) =>
    Buffer.concat([
      Buffer.from(Buffer.from(rest.run, "base64").toString("latin1").repeat(rest.times), "latin1"),
      Buffer.from(rest.tail, "base64"),
    ]);

  it("rebuilds exactly the bytes it describes, across block boundaries and for every period", () => {
    const bytes = fc.uint8Array({ minLength: 1, maxLength: 8 }).chain((unit) =>
      fc.record({
        unit: fc.constant(Buffer.from(unit)),
        times: fc.integer({ min: 1, max: 3000 }),
        tail: fc.uint8Array({ maxLength: 40 }),
      }),
    );
    fc.assert(
      fc.property(bytes, ({ unit, times, tail }) => {
        const input = Buffer.concat([Buffer.concat(Array(times).fill(unit)), Buffer.from(tail)]);
        // A unit of at most 8 bytes repeated, then a tail shorter than the 64 allowed: always found.
        const rest = repeatedRun(input, 64);
        expect(rest).toBeDefined();
        expect(rebuild(rest!).equals(input)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("keeps a send of runs one after another (nested brackets) as runs, rebuilt exactly", () => {
    const input = Buffer.from(`${"[".repeat(6000)}${"]".repeat(10_000)}}}\n`);
    const rest = repeatedRun(input, 4096);
    expect(rest?.then).toBeDefined();
    const all = (r: NonNullable<typeof rest>): Buffer =>
      Buffer.concat([
        Buffer.from(Buffer.from(r.run, "base64").toString("latin1").repeat(r.times), "latin1"),
        r.then ? all(r.then) : Buffer.from(r.tail, "base64"),
      ]);
    expect(all(rest!).equals(input)).toBe(true);
  });

  it("finds a mismatch that sits deep inside a block", () => {
    const input = Buffer.alloc(3 * 4096 + 100, 0x20);
    input[4096 + 7] = 0x41;
    const rest = repeatedRun(input, 16_384);
    expect(rest?.run).toBe(Buffer.from(" ").toString("base64"));
    expect(rest?.times).toBe(4096 + 7);
    expect(rebuild(rest!).equals(input)).toBe(true);
  });
});
