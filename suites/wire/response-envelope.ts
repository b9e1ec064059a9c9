import fc from "fast-check";
import { requestId } from "../../generators/requestId.js";
import { type Check, describeReply, fail, pass, rpc } from "../harness/check.js";

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
        return fail(`No response to ${method}.`, "a response echoing the id", describeReply(reply));
      },
    ),
};

export const checks: Check[] = [echoId];
