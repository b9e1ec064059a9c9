import fc from "fast-check";
import {
  type Check,
  type CheckContext,
  describeReply,
  errorCode,
  type Finding,
  fail,
  pass,
  resultOf,
  rpc,
} from "../harness/check.js";
import { classesFirst, cover } from "../harness/classes.js";
import { judgedBy } from "../harness/expect.js";

/** act without a type, then with a type of every wrong kind. */
const TYPE_CLASSES: Record<string, unknown>[] = [
  {},
  { x: 1, stringArg: "" },
  ...["", 0, 1, true, null, [], ["move"], {}].map((type) => ({ type })),
];
const EVENTS_KEYS = ["afterSeq", "limit"];
/** Values of afterSeq and limit that are no integer: strings (one numeric), fractions, booleans, arrays, objects. */
const NOT_INTEGERS: unknown[] = ["1", "", 1.5, -0.5, true, false, [], [1], {}, { n: 1 }];

/**
 * Sends `request`; passes when it is rejected as invalid params. One rejected with another code broke only the
 * code: the check's other rule (what act or events takes) holds, since the request was refused. One served as if
 * valid breaks both.
 */
async function expectInvalidParams(ctx: CheckContext, request: object, what: string): Promise<Finding> {
  const reply = await ctx.call(await ctx.session(), request);
  const expected = ctx.contract.codes["error.invalid-params"]!;
  const code = errorCode(reply);
  if (code === expected) return pass("rejected");
  return judgedBy(
    { kind: "error", codes: [expected] },
    fail(
      `${what} was not rejected with ${expected}.`,
      String(expected),
      describeReply(reply),
      code === undefined ? undefined : ["error.invalid-params"],
    ),
  );
}

export const actWithoutType: Check = {
  id: "error.invalid-params/act-type",
  rules: ["error.invalid-params", "command.type"],
  description: "Calls act with the command type missing, empty, or not a string.",
  note: "type is a required non-empty string",
  run: (ctx) =>
    ctx.property(
      fc.oneof(
        fc.constant({}),
        fc.constantFrom<unknown>("", 0, 1, true, null, [], ["move"], {}).map((type) => ({ type })),
        fc.record({ x: fc.integer(), stringArg: fc.string() }),
      ),
      async (params) =>
        expectInvalidParams(
          ctx,
          rpc("act", params as Record<string, unknown>, 1),
          `act with params ${JSON.stringify(params)}`,
        ),
      classesFirst<Record<string, unknown>>(TYPE_CLASSES, ctx.runs - TYPE_CLASSES.length),
    ),
};

export const eventsIllTyped: Check = {
  id: "error.invalid-params/events-cursor",
  rules: ["error.invalid-params", "method.events"],
  description:
    "Calls events with afterSeq or limit that are not integers: strings, fractions, booleans, arrays, objects; and 1e300.",
  note: "events takes {afterSeq?: integer, limit?: integer}; 1e300 is an integer in value, so a page for it passes",
  run: (ctx) =>
    ctx.property(
      fc.record({
        key: fc.constantFrom(...EVENTS_KEYS),
        value: fc.constantFrom<unknown>(...NOT_INTEGERS, 1e300),
      }),
      async ({ key, value }) => {
        const request = rpc("events", { [key]: value }, 1);
        // 1e300 is an integer in value, though no 64-bit integer holds it: refusing it or serving a page both pass.
        if (Number.isInteger(value)) {
          const page = resultOf(await ctx.call(await ctx.session(), request));
          if (Number.isSafeInteger(page?.latestSeq) && Array.isArray(page?.events))
            return pass("read as the integer it is");
        }
        return expectInvalidParams(ctx, request, `events with ${key}=${JSON.stringify(value)}`);
      },
      classesFirst(
        cover(EVENTS_KEYS, NOT_INTEGERS).map(([key, value]) => ({ key, value })),
        Math.max(3, ctx.runs - EVENTS_KEYS.length * NOT_INTEGERS.length),
      ),
    ),
};

export const checks: Check[] = [actWithoutType, eventsIllTyped];
