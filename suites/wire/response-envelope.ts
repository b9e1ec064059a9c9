import fc from "fast-check";
import { lostInDouble, preciseNumber, preciseNumberClasses } from "../../generators/preciseNumber.js";
import { requestId } from "../../generators/requestId.js";
import { type Check, describeReply, type Finding, fail, pass, rpc, warn } from "../harness/check.js";
import { classesFirst } from "../harness/classes.js";
import { judgedBy } from "../harness/expect.js";
import { memberText, sameJsonValue } from "../harness/judge.js";

/** One id of every JSON type and edge (empty, non-ASCII, zero, negative, the largest safe integer, fractions, nested). */
const ID_CLASSES: unknown[] = [
  "",
  "id-1",
  "\u00e9\u{1d11e}\u0000",
  0,
  -1,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  0.5,
  -1.5e-7,
  1e300,
  true,
  false,
  null,
  [],
  {},
  [1, "a", null],
  { a: { b: [] } },
];
const ECHO_METHODS = ["ping", "status", "observe", "events", "no.such.method"];
const ID_EXAMPLES = ID_CLASSES.map((id, i) => ({ id, method: ECHO_METHODS[i % ECHO_METHODS.length]! }));

export const echoId: Check = {
  id: "wire.response-envelope/echo-id",
  rules: ["wire.response-envelope"],
  description:
    "Sends ping, status, observe, events and an unknown method with ids of every JSON type (strings, large and negative numbers, booleans, null, arrays, objects).",
  run: (ctx) =>
    ctx.property(
      fc.record({ id: requestId(), method: fc.constantFrom(...ECHO_METHODS) }),
      async ({ id, method }) => {
        const conn = await ctx.session();
        const reply = await ctx.call(conn, rpc(method, {}, id));
        if (reply.kind === "response") return pass("echoed");
        return judgedBy(
          { kind: "answered" },
          fail(`No response to ${method}.`, "a response echoing the id", describeReply(reply)),
        );
      },
      classesFirst(ID_EXAMPLES, Math.max(3, ctx.runs - ID_EXAMPLES.length)),
    ),
};

/** Numbers a double holds exactly but that are written otherwise than a double prints them: same value, other text. */
const RESPELLED = ["1.0", "1e2", "1E+2", "-0", "0.0", "100.00", "2.5e-1", "1e20", "-9007199254740991.0"];

type Shape = "bare" | "array" | "object";
const SHAPES: Record<Shape, (number: string) => string> = {
  bare: (n) => n,
  array: (n) => `[${n}]`,
  object: (n) => `{"n":${n}}`,
};
const SHAPE_NAMES = Object.keys(SHAPES) as Shape[];

/**
 * The id's JSON text with every number replaced by its nearest double, as a parser that reads numbers into doubles
 * echoes it; undefined where a number has no double (1e400 overflows to Infinity, which is no JSON value).
 */
export function nearestDouble(id: string): string | undefined {
  let finite = true;
  const value = JSON.parse(id, (_key, v: unknown) => {
    if (typeof v === "number" && !Number.isFinite(v)) finite = false;
    return v;
  }) as unknown;
  return finite ? JSON.stringify(value) : undefined;
}

interface PreciseCase {
  number: string;
  shape: Shape;
  method: string;
}

const PRECISE_EXAMPLES: PreciseCase[] = [
  { number: "12345678901234567890", shape: "bare", method: "ping" },
  { number: "-9007199254740993", shape: "bare", method: "ping" },
  { number: "9007199254740993", shape: "bare", method: "no.such.method" },
  { number: "3.141592653589793238462643383279", shape: "bare", method: "status" },
  { number: "1e400", shape: "bare", method: "ping" },
  { number: "18446744073709551617", shape: "array", method: "events" },
  { number: "-12345678901234567890", shape: "object", method: "observe" },
  { number: "1e-400", shape: "object", method: "ping" },
  { number: "1.0", shape: "bare", method: "ping" },
  { number: "1e2", shape: "bare", method: "ping" },
  { number: "-0", shape: "array", method: "ping" },
];
// Then every other listed number a double cannot hold, and every other respelling: each is tried in every profile.
for (const number of [...preciseNumberClasses().map((p) => p.text), ...RESPELLED])
  if (!PRECISE_EXAMPLES.some((e) => e.number === number)) {
    const i = PRECISE_EXAMPLES.length;
    PRECISE_EXAMPLES.push({ number, shape: SHAPE_NAMES[i % 3]!, method: ECHO_METHODS[i % ECHO_METHODS.length]! });
  }

export const preciseId: Check = {
  id: "wire.response-envelope/precise-id",
  rules: ["wire.response-envelope"],
  description:
    "Sends ping, status, observe, events and an unknown method as raw lines whose id is a number literal a double " +
    "cannot hold (integers beyond 2^53 such as 12345678901234567890 and -9007199254740993, fractions of more than " +
    "17 significant digits, exponents beyond a double's range such as 1e400), bare or inside an array or an object, " +
    "or a number a double holds but written otherwise (1.0, 1e2, -0); reads the id back from the reply's text.",
  note:
    "the id comes back as the same JSON value: a number keeps its exact decimal value, not necessarily its " +
    "spelling (RFC 8259 numbers are values, so 1.0 may come back as 1 and 1e2 as 100). RFC 8259 section 6 lets a " +
    "parser limit the range and precision it accepts and RFC 7493 section 2.2 says an integer beyond 2^53 cannot " +
    "be expected to keep its exact value, so the nearest double of the id sent (12345678901234567000 for " +
    "12345678901234567890), or a number no double holds refused as a parse error or invalid request (id null), is " +
    "a warning; any other value, a truncated number, or a string for a number fails",
  run: (ctx) =>
    ctx.property(
      fc.record({
        number: fc.oneof(
          { weight: 4, arbitrary: preciseNumber().map((p) => p.text) },
          { weight: 1, arbitrary: fc.constantFrom(...RESPELLED) },
        ),
        shape: fc.constantFrom<Shape>("bare", "bare", "array", "object"),
        method: fc.constantFrom(...ECHO_METHODS),
      }),
      async ({ number, shape, method }): Promise<Finding> => {
        const conn = await ctx.session();
        const id = SHAPES[shape](number);
        const text = `{"jsonrpc":${JSON.stringify(ctx.contract.jsonrpc)},"id":${id},"method":${JSON.stringify(method)},"params":{}}`;
        // The judge compares parsed ids, where a double has already lost the digits: the id is read as text here.
        const reply = await ctx.call(conn, text, { anyId: true });
        if (reply.kind !== "response")
          return judgedBy(
            { kind: "answered" },
            fail(`No response to ${method} with id ${id}.`, `a response with "id":${id}`, describeReply(reply)),
          );
        const echoed = memberText(reply.raw.toString("utf8"), "id") ?? "";
        if (sameJsonValue(id, echoed)) return pass("echoed");
        const { codes } = ctx.contract;
        const code = reply.response.error?.code;
        const refused = echoed === "null" && (code === codes["error.parse"] || code === codes["error.invalid-request"]);
        if (refused && lostInDouble(number))
          return warn(
            `A request with id ${id} was refused (${code}): a number a double cannot hold is not served, though ` +
              "the contract echoes any caller-chosen id.",
            `"id":${id}`,
            describeReply(reply),
          );
        const double = nearestDouble(id);
        if (double !== undefined && sameJsonValue(double, echoed))
          return warn(
            `The response echoed id ${echoed} for the request's id ${id}: the nearest double, not the number sent. ` +
              "RFC 8259 section 6 lets a parser limit the precision of numbers and RFC 7493 section 2.2 says such " +
              "a number cannot be expected to keep its exact value, though the contract echoes the id as sent.",
            `"id":${id}`,
            describeReply(reply),
          );
        // Any well-formed reply whose id is the same JSON value, or its nearest double, meets the rule.
        return judgedBy(
          { kind: "answered" },
          fail(
            `The response echoed id ${echoed || "(none)"} for the request's id ${id}: another JSON value.`,
            `"id":${id} (the same JSON value; another spelling of the same number, or its nearest double, is tolerated)`,
            describeReply(reply),
          ),
        );
      },
      classesFirst(PRECISE_EXAMPLES, ctx.runs - PRECISE_EXAMPLES.length),
    ),
};

export const checks: Check[] = [echoId, preciseId];
