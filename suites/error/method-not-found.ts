import { unknownMethod } from "../../generators/unknownMethod.js";
import { type Check, rpc } from "../harness/check.js";
import { expectError } from "../harness/expect.js";

export const unknownMethods: Check = {
  id: "error.method-not-found/unknown-method",
  rules: ["error.method-not-found"],
  description: "Calls methods the contract does not define: near misses of real names, other cases, Unicode names.",
  run: (ctx) =>
    ctx.property(unknownMethod({ known: ctx.contract.methods }), (method) =>
      expectError(ctx, rpc(method, {}, 1), "error.method-not-found", `The unknown method ${JSON.stringify(method)}`),
    ),
};

export const checks: Check[] = [unknownMethods];
