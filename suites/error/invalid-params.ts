import fc from "fast-check";
import { type Check, rpc } from "../harness/check.js";
import { expectError } from "../harness/expect.js";

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
    ),
};

export const eventsIllTyped: Check = {
  id: "error.invalid-params/events-cursor",
  rules: ["error.invalid-params", "method.events"],
  description:
    "Calls events with afterSeq or limit that are not integers: strings, fractions, booleans, arrays, objects.",
  note: "events takes {afterSeq?: integer, limit?: integer}",
  run: (ctx) =>
    ctx.property(
      fc.record({
        key: fc.constantFrom("afterSeq", "limit"),
        value: fc.constantFrom<unknown>("1", "", 1.5, -0.5, true, false, [], [1], {}, { n: 1 }, 1e300),
      }),
      ({ key, value }) =>
        expectError(
          ctx,
          rpc("events", { [key]: value }, 1),
          "error.invalid-params",
          `events with ${key}=${JSON.stringify(value)}`,
        ),
    ),
};

export const checks: Check[] = [actWithoutType, eventsIllTyped];
