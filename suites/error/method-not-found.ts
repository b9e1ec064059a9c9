import { unknownMethod, unknownMethodNearMisses } from "../../generators/unknownMethod.js";
import { type Check, rpc } from "../harness/check.js";
import { classesFirst } from "../harness/classes.js";

/**
 * Names that break a dispatch table first: an object's inherited members (a lookup by name finds them), names a
 * lenient reader trims or folds to a real one, a near miss, and non-ASCII.
 */
const METHOD_CLASSES = [
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  " ping",
  "ping ",
  "PING",
  "Status",
  "pings",
  "rpc.ping",
  "\u00e9v\u00e9nements",
  "\u{1f4a5}",
];

import { expectError } from "../harness/expect.js";

/** The names above, then every other near miss of every real method (each change of each name). */
const methodClasses = (known: readonly string[]) => [
  ...METHOD_CLASSES,
  ...unknownMethodNearMisses(known).filter((m) => !METHOD_CLASSES.includes(m)),
];

export const unknownMethods: Check = {
  id: "error.method-not-found/unknown-method",
  rules: ["error.method-not-found"],
  description:
    "Calls methods the contract does not define: an object's inherited member names (__proto__, constructor), " +
    "near misses of real names, other cases, padded names, Unicode names.",
  run: (ctx) =>
    ctx.property(
      unknownMethod({ known: ctx.contract.methods }),
      (method) =>
        expectError(ctx, rpc(method, {}, 1), "error.method-not-found", `The unknown method ${JSON.stringify(method)}`),
      classesFirst(methodClasses(ctx.contract.methods), ctx.runs - METHOD_CLASSES.length),
    ),
};

export const checks: Check[] = [unknownMethods];
