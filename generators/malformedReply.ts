import fc from "fast-check";
import { contract } from "../protocol/contract.js";

export type ReplyFlaw = "non-json" | "non-object" | "jsonrpc" | "id" | "result-and-error" | "error-shape";

export interface MalformedReplyConstraints {
  /** Which flaws to draw. Default: all of them. */
  flaws?: ReplyFlaw[];
  /** The jsonrpc version a valid reply carries, which a flawed one must not. Default: the contract's. */
  jsonrpc?: string;
}

/** A reply line a client must reject, whatever id its request carried. */
export interface MalformedReply {
  flaw: ReplyFlaw;
  /** What is wrong, in words. */
  detail: string;
  /** The reply line (without LF) to a request with this id (undefined: the request had none). */
  render(id: unknown): string;
}

/** Members as raw JSON text, so a value may be something JSON.stringify never writes (NaN). */
type Members = [string, string][];
const object = (members: Members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`;
const json = (v: unknown) => JSON.stringify(v) ?? "null";

const OK = `{"ok":true}`;

function reply(flaw: ReplyFlaw, detail: string, render: (id: unknown) => string): MalformedReply {
  return { flaw, detail, render, [fc.toStringMethod]: () => `${flaw}: ${detail}` } as MalformedReply;
}

/** A JSON value of another type whose text or truthiness "equals" the id: "1" or true for 1. */
export function lookalikes(id: unknown): unknown[] {
  if (typeof id === "number") return [String(id), ...(id === 1 ? [true] : id === 0 ? [false] : []), [id]];
  if (typeof id === "string") {
    const n = Number(id);
    return [...(id.trim() !== "" && Number.isFinite(n) ? [n] : []), [id], { id }];
  }
  if (typeof id === "boolean") return [id ? 1 : 0, String(id)];
  if (id === null || id === undefined) return ["null", 0, false, ""];
  return [JSON.stringify(id)];
}

/** A JSON value that differs from the id in value (same type where there is room). */
export function differentId(id: unknown, delta: number): unknown {
  const step = delta === 0 ? 1 : delta;
  if (typeof id === "number") return id + step === id ? -id - 1 : id + step;
  if (typeof id === "string") return `${id}${Math.abs(step)}`;
  if (typeof id === "boolean") return !id;
  return step;
}

/**
 * Every listed reply that is not JSON: NaN, Infinity and -Infinity (which Python's json reads) each as the result,
 * the id and a result member, and the other lenient readings. Drawn by the generator, and each tried first.
 */
function nonJsonReplies(jsonrpc: string): MalformedReply[] {
  const head = (id: unknown): Members => [
    ["jsonrpc", json(jsonrpc)],
    ["id", json(id ?? null)],
  ];
  const valid = (id: unknown) => object([...head(id), ["result", OK]]);
  const tokens = ["NaN", "Infinity", "-Infinity"].flatMap((token) =>
    (["member", "id", "result"] as const).map((where) =>
      reply("non-json", `${token} as ${where === "member" ? "a result member" : `the ${where}`}`, (id) =>
        where === "id"
          ? object([
              ["jsonrpc", json(jsonrpc)],
              ["id", token],
              ["result", OK],
            ])
          : where === "result"
            ? object([...head(id), ["result", token]])
            : object([...head(id), ["result", `{"ok":true,"n":${token}}`]]),
      ),
    ),
  );
  return [
    ...tokens,
    reply("non-json", "a trailing comma", (id) => `${valid(id).slice(0, -1)},}`),
    reply("non-json", "a comment", (id) => `${valid(id).slice(0, -1)}/* c */}`),
    reply("non-json", "single quotes", (id) => valid(id).replace(/"/g, "'")),
    reply("non-json", "an unquoted key", (id) => valid(id).replace(`"result"`, "result")),
    reply("non-json", "a bad literal", (id) => object([...head(id), ["result", `{"ok":True}`]])),
    reply("non-json", "a leading zero", (id) => object([...head(id), ["result", `{"ok":true,"n":01}`]])),
    reply("non-json", "a hexadecimal number", (id) => object([...head(id), ["result", `{"ok":true,"n":0x1}`]])),
    reply("non-json", "trailing garbage", (id) => `${valid(id)}x`),
    reply("non-json", "two objects on one line", (id) => `${valid(id)}${valid(id)}`),
  ];
}

/** Replies whose error member is no object of an integer code and a string message. */
function errorShapeFlaws(head: (id: unknown) => Members, codes: number[]): fc.Arbitrary<MalformedReply> {
  return fc.oneof(
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom<unknown>(true, false, null, [codes[0]], {}, `${codes[0]}`),
          fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
        ),
        fc.constantFrom(...codes),
      )
      .map(([code]) =>
        reply("error-shape", `error code ${json(code)}`, (id) =>
          object([
            ...head(id),
            [
              "error",
              object([
                ["code", json(code)],
                ["message", `"m"`],
              ]),
            ],
          ]),
        ),
      ),
    fc
      .constantFrom<unknown>(undefined, 1, null, true, [], {})
      .chain((message) =>
        fc
          .constantFrom(...codes)
          .map((code) =>
            reply(
              "error-shape",
              message === undefined ? "error message missing" : `error message ${json(message)}`,
              (id) =>
                object([
                  ...head(id),
                  [
                    "error",
                    object([
                      ["code", json(code)],
                      ...(message === undefined ? [] : ([["message", json(message)]] as Members)),
                    ]),
                  ],
                ]),
            ),
          ),
      ),
    fc.constant(
      reply("error-shape", "error code missing", (id) => object([...head(id), ["error", `{"message":"m"}`]])),
    ),
    fc
      .constantFrom<unknown>(null, "failed", 1, [], true)
      .map((e) => reply("error-shape", `error ${json(e)}`, (id) => object([...head(id), ["error", json(e)]]))),
  );
}

function flaws(jsonrpc: string): Record<ReplyFlaw, fc.Arbitrary<MalformedReply>> {
  const head = (id: unknown): Members => [
    ["jsonrpc", json(jsonrpc)],
    ["id", json(id ?? null)],
  ];
  const valid = (id: unknown) => object([...head(id), ["result", OK]]);
  const codes = Object.values(contract.codes);
  return {
    "non-json": fc.oneof(
      fc.constantFrom(...nonJsonReplies(jsonrpc)),
      fc
        .integer({ min: 1, max: 40 })
        .map((cut) => reply("non-json", `truncated by ${cut} characters`, (id) => valid(id).slice(0, -cut))),
    ),
    "non-object": fc
      .constantFrom<[string, (id: unknown) => string]>(
        ["null", () => "null"],
        ["true", () => "true"],
        ["a number", () => "1"],
        ["a string", (id) => JSON.stringify(valid(id))],
        ["an empty array", () => "[]"],
        ["a batch array", (id) => `[${valid(id)}]`],
      )
      .map(([what, render]) => reply("non-object", `the reply is ${what}`, render)),
    jsonrpc: fc
      .oneof(
        fc.constant(undefined),
        fc.constantFrom<unknown>(2, 2.5, null, "", `${jsonrpc} `, ` ${jsonrpc}`, [jsonrpc], "1.0"),
        fc.string({ maxLength: 6 }),
      )
      .filter((v) => v !== jsonrpc)
      .map((v) =>
        reply("jsonrpc", v === undefined ? "jsonrpc missing" : `jsonrpc ${json(v)}`, (id) =>
          object([
            ...(v === undefined ? [] : ([["jsonrpc", json(v)]] as Members)),
            ["id", json(id ?? null)],
            ["result", OK],
          ]),
        ),
      ),
    id: fc.oneof(
      fc.constant(
        reply("id", "id missing", () =>
          object([
            ["jsonrpc", json(jsonrpc)],
            ["result", OK],
          ]),
        ),
      ),
      fc
        .integer({ min: -1000, max: 1000 })
        .map((delta) =>
          reply("id", `an id that differs in value (by ${delta})`, (id) => valid(differentId(id, delta))),
        ),
      fc.nat({ max: 3 }).map((n) =>
        reply("id", "an id of another JSON type with an equal-looking value", (id) => {
          const alike = lookalikes(id);
          return valid(alike[n % alike.length]);
        }),
      ),
    ),
    "result-and-error": fc.constantFrom(
      reply("result-and-error", "both result and error", (id) =>
        object([...head(id), ["result", OK], ["error", `{"code":${codes[0]},"message":"both"}`]]),
      ),
      reply("result-and-error", "both error and result", (id) =>
        object([...head(id), ["error", `{"code":${codes[0]},"message":"both"}`], ["result", OK]]),
      ),
      reply("result-and-error", "both result and error null", (id) =>
        object([...head(id), ["result", OK], ["error", "null"]]),
      ),
      reply("result-and-error", "neither result nor error", (id) => object(head(id))),
    ),
    "error-shape": errorShapeFlaws(head, codes),
  };
}

const ALL: ReplyFlaw[] = ["non-json", "non-object", "jsonrpc", "id", "result-and-error", "error-shape"];

/**
 * Reply lines of valid UTF-8 that break RFC 8259 JSON or the response envelope in one place, to
 * any request id: what a client must reject rather than take as a result or a remote error.
 */
export function malformedReply(constraints: MalformedReplyConstraints = {}): fc.Arbitrary<MalformedReply> {
  const { flaws: chosen = ALL, jsonrpc = contract.jsonrpc } = constraints;
  const table = flaws(jsonrpc);
  return fc.oneof(...chosen.map((f) => table[f]));
}

/**
 * One reply of each kind the contract names (NaN, an id "1" or true for 1, both result and error,
 * a boolean code ...), tried before the generated ones so that no seed misses them.
 */
export function malformedReplyExamples(jsonrpc: string = contract.jsonrpc): MalformedReply[] {
  const head = (id: unknown): Members => [
    ["jsonrpc", json(jsonrpc)],
    ["id", json(id ?? null)],
  ];
  const code = Object.values(contract.codes)[0];
  const error = (members: Members) => (id: unknown) => object([...head(id), ["error", object(members)]]);
  const alike = (n: number) => (id: unknown) => {
    const all = lookalikes(id);
    return object([...head(all[n % all.length]), ["result", OK]]);
  };
  return [
    ...nonJsonReplies(jsonrpc),
    reply("non-object", "the reply is null", () => "null"),
    reply("non-object", "the reply is a batch array", (id) => `[${object([...head(id), ["result", OK]])}]`),
    reply("jsonrpc", "jsonrpc missing", (id) =>
      object([
        ["id", json(id ?? null)],
        ["result", OK],
      ]),
    ),
    reply("jsonrpc", `jsonrpc "1.0"`, (id) =>
      object([
        ["jsonrpc", `"1.0"`],
        ["id", json(id ?? null)],
        ["result", OK],
      ]),
    ),
    reply("id", "id missing", () =>
      object([
        ["jsonrpc", json(jsonrpc)],
        ["result", OK],
      ]),
    ),
    reply("id", "an id that differs in value", (id) => object([...head(differentId(id, 1)), ["result", OK]])),
    reply("id", 'an id of another JSON type that reads the same ("1" for 1)', alike(0)),
    reply("id", "an id of another JSON type that is loosely equal (true for 1, or the id in an array)", alike(1)),
    reply("result-and-error", "both result and error", (id) =>
      object([...head(id), ["result", OK], ["error", `{"code":${code},"message":"both"}`]]),
    ),
    reply("result-and-error", "neither result nor error", (id) => object(head(id))),
    reply(
      "error-shape",
      "error code 1.5",
      error([
        ["code", "1.5"],
        ["message", `"m"`],
      ]),
    ),
    reply(
      "error-shape",
      "error code true",
      error([
        ["code", "true"],
        ["message", `"m"`],
      ]),
    ),
    reply(
      "error-shape",
      `error code "${code}"`,
      error([
        ["code", `"${code}"`],
        ["message", `"m"`],
      ]),
    ),
    reply("error-shape", "error message missing", error([["code", String(code)]])),
    reply(
      "error-shape",
      "error message 1",
      error([
        ["code", String(code)],
        ["message", "1"],
      ]),
    ),
    reply("error-shape", "error null", (id) => object([...head(id), ["error", "null"]])),
  ];
}
