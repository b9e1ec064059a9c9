import fc from "fast-check";
import { lostInDouble, preciseNumber } from "../../generators/preciseNumber.js";
import { requestId } from "../../generators/requestId.js";
import { type Check, describeReply, type Finding, fail, pass, rpc, warn } from "../harness/check.js";
import { judgedBy } from "../harness/expect.js";
import { memberText, sameJsonValue } from "../harness/judge.js";

export const echoId: Check = {
  id: "wire.response-envelope/echo-id",
  rules: ["wire.response-envelope"],
  description:
    "Sends ping, status, observe, events and an unknown method with ids of every JSON type (strings, large and negative numbers, booleans, null, arrays, objects).",
  run: (ctx) =>
    ctx.property(
      fc.record({ id: requestId(), method: fc.constantFrom("ping", "status", "observe", "events", "no.such.method") }),
      async ({ id, method }) => {
        const conn = await ctx.session();
        const reply = await ctx.call(conn, rpc(method, {}, id));
        if (reply.kind === "response") return pass("echoed");
        return judgedBy(
          { kind: "answered" },
          fail(`No response to ${method}.`, "a response echoing the id", describeReply(reply)),
        );
      },
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
const METHODS = ["ping", "status", "observe", "events", "no.such.method"];

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
  { number: "1.0", shape: "bare", method: "ping" },
  { number: "1e2", shape: "bare", method: "ping" },
];

export const preciseId: Check = {
  id: "wire.response-envelope/precise-id",
  rules: ["wire.response-envelope"],
  description:
    "Sends ping, status, observe, events and an unknown method as raw lines whose id is a number literal a double " +
    "cannot hold (integers beyond 2^53 such as 12345678901234567890 and -9007199254740993, fractions of more than " +
    "17 significant digits, exponents beyond a double's range such as 1e400), bare or inside an array or an object, " +
    "or a number a double holds but written otherwise (1.0, 1e2, -0); reads the id back from the reply's text.",
  note:
    "the id comes back as the same JSON value: a number keeps its exact decimal value (12345678901234567000 for " +
    "12345678901234567890 is another number), not necessarily its spelling (RFC 8259 numbers are values, so 1.0 " +
    "may come back as 1 and 1e2 as 100); a number no double holds refused as a parse error or invalid request " +
    "(id null) is a warning, since RFC 8259 section 6 lets a parser limit the range and precision it accepts, " +
    "though the contract echoes any caller-chosen id",
  run: (ctx) =>
    ctx.property(
      fc.record({
        number: fc.oneof(
          { weight: 4, arbitrary: preciseNumber().map((p) => p.text) },
          { weight: 1, arbitrary: fc.constantFrom(...RESPELLED) },
        ),
        shape: fc.constantFrom<Shape>("bare", "bare", "array", "object"),
        method: fc.constantFrom(...METHODS),
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
        const double = (() => {
          try {
            return JSON.stringify(JSON.parse(id));
          } catch {
            return undefined;
          }
        })();
        const how = double !== undefined && sameJsonValue(double, echoed) ? " (what a double makes of it)" : "";
        // Every reply's id is judged as the same JSON value, exactly: any well-formed reply meets the rule.
        return judgedBy(
          { kind: "answered" },
          fail(
            `The response echoed id ${echoed || "(none)"} for the request's id ${id}: another JSON value${how}.`,
            `"id":${id} (the same JSON value; another spelling of the same number is fine)`,
            describeReply(reply),
          ),
        );
      },
      { examples: PRECISE_EXAMPLES },
    ),
};

export const checks: Check[] = [echoId, preciseId];
