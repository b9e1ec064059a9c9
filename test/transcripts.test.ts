import { describe, expect, it } from "vitest";
import { trimTranscript } from "../suites/harness/harness.js";
import { REDACTED, redactor } from "../suites/harness/redact.js";

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
  it("keep the start and the end of a long case, and say how much was left out", () => {
    const entries = Array.from({ length: 500 }, (_, i) => ({ dir: "send" as const, t: i, text: String(i), length: 1 }));
    const trimmed = trimTranscript(entries);
    expect(trimmed).toHaveLength(201);
    expect(trimmed[150]!.text).toBe("… 300 entries left out …");
    expect(trimmed.at(-1)!.text).toBe("499");
    expect(trimTranscript(entries.slice(0, 10))).toHaveLength(10);
  });
});
