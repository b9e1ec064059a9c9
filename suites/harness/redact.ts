// The one redaction: the token never reaches a transcript, a message or a report.
//
// A token travels as a JSON string, so it is looked for raw and JSON-escaped. A long token
// is replaced wherever it appears; a short one only where it stands alone (not inside a
// word), so a token such as "t" does not shred every letter t of ordinary text.

export const REDACTED = "«redacted»";
/** What a report shows in place of a near miss of the token (the oracle's nearMisses describe each, in order). */
export const NEAR_MISS_SHOWN = "«near miss of the token»";

/** Tokens shorter than this are weak, and are matched only as whole words. */
export const STRONG_TOKEN_LENGTH = 8;

export interface Redactor {
  text(value: string): string;
  bytes(value: Buffer): Buffer;
  /** Every string inside a value (messages, bridge output, transcripts). */
  deep<T>(value: T): T;
}

const identity: Redactor = { text: (v) => v, bytes: (v) => v, deep: (v) => v };

export function redactor(token: string | undefined): Redactor {
  if (!token) return identity;
  const forms = [...new Set([token, JSON.stringify(token).slice(1, -1)])].sort((a, b) => b.length - a.length);
  const whole = token.length < STRONG_TOKEN_LENGTH;
  const pattern = (list: string[]) => {
    const body = list.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
    return new RegExp(whole ? `(?<![\\p{L}\\p{N}_])(?:${body})(?![\\p{L}\\p{N}_])` : body, "gu");
  };
  const textPattern = pattern(forms);
  // Bytes are matched as latin1 text, one character per byte, so any byte sequence survives.
  const bytePattern = new RegExp(
    pattern(forms.map((f) => Buffer.from(f, "utf8").toString("latin1"))).source.replace(
      /\\p\{L\}\\p\{N\}/g,
      "A-Za-z0-9",
    ),
    "g",
  );
  const text = (value: string) =>
    value
      .split(REDACTED)
      .map((part) => part.replace(textPattern, REDACTED))
      .join(REDACTED);
  const byteForms = forms.map((f) => Buffer.from(f, "utf8"));
  const bytes = (value: Buffer) => {
    // Most bytes hold no token: a search for each form is far cheaper than copying megabytes into text.
    if (!byteForms.some((f) => value.includes(f))) return value;
    const latin1 = value.toString("latin1");
    const out = latin1.replace(bytePattern, Buffer.from(REDACTED, "utf8").toString("latin1"));
    return out === latin1 ? value : Buffer.from(out, "latin1");
  };
  const deep = <T>(value: T): T => {
    const walk = (v: unknown): unknown => {
      if (typeof v === "string") return text(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
      return v;
    };
    return walk(value) as T;
  };
  return { text, bytes, deep };
}
