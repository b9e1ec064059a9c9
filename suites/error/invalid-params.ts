import fc from "fast-check";
import { type Check, pass, resultOf, rpc } from "../harness/check.js";
import { classesFirst, cover } from "../harness/classes.js";
import { expectError } from "../harness/expect.js";

/** act without a type, then with a type of every wrong kind. */
const TYPE_CLASSES: Record<string, unknown>[] = [
  {},
  { x: 1, stringArg: "" },
  ...["", 0, 1, true, null, [], ["move"], {}].map((type) => ({ type })),
];
const EVENTS_KEYS = ["afterSeq", "limit"];
/** Values of afterSeq and limit that are no integer: strings (one numeric), fractions, booleans, arrays, objects. */
const NOT_INTEGERS: unknown[] = ["1", "", 1.5, -0.5, true, false, [], [1], {}, { n: 1 }];

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
      (params) =>
        expectError(
          ctx,
          rpc("act", params as Record<string, unknown>, 1),
          "error.invalid-params",
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
        return expectError(ctx, request, "error.invalid-params", `events with ${key}=${JSON.stringify(value)}`);
      },
      classesFirst(
        cover(EVENTS_KEYS, NOT_INTEGERS).map(([key, value]) => ({ key, value })),
        Math.max(3, ctx.runs - EVENTS_KEYS.length * NOT_INTEGERS.length),
      ),
    ),
};

export const checks: Check[] = [actWithoutType, eventsIllTyped];
