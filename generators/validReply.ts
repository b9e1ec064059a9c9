import fc from "fast-check";
import { contract } from "../protocol/contract.js";

export interface ValidReplyConstraints {
  /** Results, remote errors, or both. Default: both. */
  kinds?: ("result" | "error")[];
  /** Vary the encoding (member order, insignificant whitespace, escaped characters). Default: true. */
  encodings?: boolean;
  /** Write every reply in this one encoding (overrides encodings). */
  encoding?: Encoding;
  /** The jsonrpc version to carry. Default: the contract's. */
  jsonrpc?: string;
}

/** How a JSON value is written: RFC 8259 allows every one of these for the same value. */
export interface Encoding {
  /** Whitespace around structural characters (only space and tab: a line feed would end the line). */
  space: "" | " " | "\t" | " \t ";
  order: "as-built" | "reversed";
  /** Write these characters of strings as \uXXXX escapes (all: every character). */
  escape: "none" | "all" | "solidus";
}

/** A reply a client must accept (a result) or surface as the remote error it is. */
export interface ValidReply {
  kind: "result" | "error";
  detail: string;
  encoding: Encoding;
  /** The reply line (without LF) to this request. */
  render(request: { id: unknown; method: string }): string;
}

const PLAIN: Encoding = { space: "", order: "as-built", escape: "none" };

/** Serialises a JSON value with an encoding; the value read back is always the same. */
export function encode(value: unknown, enc: Encoding = PLAIN): string {
  const s = enc.space;
  if (typeof value === "string") {
    const body = JSON.stringify(value).slice(1, -1);
    if (enc.escape === "solidus") return `"${body.replace(/\//g, "\\/")}"`;
    if (enc.escape === "all") {
      // Escape every code unit that stands for itself; existing escapes stay as they are.
      return `"${body.replace(/\\u[0-9a-fA-F]{4}|\\.|[^\\]/g, (c) =>
        c.length > 1 ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
      )}"`;
    }
    return `"${body}"`;
  }
  if (Array.isArray(value)) return `[${s}${value.map((v) => encode(v, enc)).join(`${s},${s}`)}${s}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    if (enc.order === "reversed") entries.reverse();
    return `{${s}${entries.map(([k, v]) => `${encode(k, enc)}${s}:${s}${encode(v, enc)}`).join(`${s},${s}`)}${s}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const seq = fc.nat({ max: 2 ** 31 - 1 });
const text = fc.string({ unit: "grapheme", maxLength: 24 });

/** A result each method may answer with (field names from the method rules' result shapes). */
const RESULTS: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  auth: fc.boolean().map((authorized) => ({ authorized })),
  ping: fc.constant({ ok: true }),
  status: fc
    .record({ queued: fc.nat({ max: 64 }), max: fc.integer({ min: 1, max: 64 }), seq, lastError: text })
    .map(({ queued, max, seq, lastError }) => ({
      running: true,
      host: contract.defaults.host,
      port: contract.defaults.port,
      queuedCommands: Math.min(queued, max),
      maxQueuedCommands: max,
      events: 0,
      maxEvents: max,
      observationSeq: seq,
      lastError,
    })),
  observe: fc
    .record({ seq, schemaVersion: fc.integer({ min: 1, max: 9 }) })
    .map(({ seq, schemaVersion }) => ({ observationSeq: seq, observation: { schemaVersion } })),
  events: seq.map((latestSeq) => ({ latestSeq, events: [] })),
  act: seq.map((commandSeq) => ({ accepted: true, commandSeq: commandSeq + 1 })),
};

const encoding: fc.Arbitrary<Encoding> = fc.record({
  space: fc.constantFrom<Encoding["space"]>("", " ", "\t", " \t "),
  order: fc.constantFrom<Encoding["order"]>("as-built", "reversed"),
  escape: fc.constantFrom<Encoding["escape"]>("none", "all", "solidus"),
});

/**
 * Valid replies to any request: the result the requested method answers with (an empty object
 * for a method the contract does not name), or an error with any integer code, any message and
 * optional data; each written in any of the encodings RFC 8259 allows for the same value.
 */
export function validReply(constraints: ValidReplyConstraints = {}): fc.Arbitrary<ValidReply> {
  const { kinds = ["result", "error"], encodings = true, jsonrpc = contract.jsonrpc } = constraints;
  const enc = constraints.encoding ? fc.constant(constraints.encoding) : encodings ? encoding : fc.constant(PLAIN);
  const results = fc.record(Object.fromEntries(Object.entries(RESULTS))) as fc.Arbitrary<
    Record<string, Record<string, unknown>>
  >;
  const result = fc.tuple(results, enc).map(
    ([table, e]): ValidReply => ({
      kind: "result",
      detail: "the result of the requested method",
      encoding: e,
      render: ({ id, method }) => encode({ jsonrpc, id: id ?? null, result: table[method] ?? {} }, e),
    }),
  );
  const error = fc
    .tuple(
      fc.oneof(fc.constantFrom(...Object.values(contract.codes)), fc.integer()),
      text,
      fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
      enc,
    )
    .map(
      ([code, message, data, e]): ValidReply => ({
        kind: "error",
        detail: `error ${code}${data === undefined ? "" : " with data"}`,
        encoding: e,
        render: ({ id }) =>
          encode({ jsonrpc, id: id ?? null, error: { code, message, ...(data === undefined ? {} : { data }) } }, e),
      }),
    );
  return fc.oneof(...kinds.map((k) => (k === "result" ? result : error)));
}
