import { describe, expect, it } from "vitest";
import { redactDeep } from "../runner/run.js";
import { redact, REDACTED } from "../runner/connection.js";

describe("token redaction", () => {
  it("replaces the token and its JSON-escaped form everywhere in a value", () => {
    const token = 'pa"ss\\word';
    const value = { a: `x ${token} y`, b: [JSON.stringify({ token })], c: 3 };
    const out = JSON.stringify(redactDeep(value, token));
    expect(out).not.toContain("pa\\\"ss");
    expect(out.split(REDACTED).length - 1).toBe(2);
  });

  it("is idempotent, even for a token inside the marker", () => {
    const once = redactDeep("a token t", "t");
    expect(redactDeep(once, "t")).toBe(once);
    expect(once).toBe(`a «redacted»oken «redacted»`.replace(/«redacted»/g, REDACTED));
  });

  it("redacts bytes on the wire", () => {
    const out = redact(Buffer.from('{"token":"abc123"}'), [Buffer.from("abc123")]).toString();
    expect(out).toBe(`{"token":"${REDACTED}"}`);
  });
});

describe("transcripts", () => {
  it("keep the start and the end of a long case, and say how much was left out", async () => {
    const { trimTranscript } = await import("../suites/context.js");
    const entries = Array.from({ length: 500 }, (_, i) => ({ dir: "send" as const, t: i, text: String(i), length: 1 }));
    const trimmed = trimTranscript(entries);
    expect(trimmed).toHaveLength(201);
    expect(trimmed[150]!.text).toBe("… 300 entries left out …");
    expect(trimmed.at(-1)!.text).toBe("499");
    expect(trimTranscript(entries.slice(0, 10))).toHaveLength(10);
  });
});
