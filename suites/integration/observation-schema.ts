import { type Check, describeReply, fail, pass, resultOf, rpc, warn } from "../harness/check.js";
import { judgedBy } from "../harness/expect.js";

export const observationSchema: Check = {
  id: "integration.observation-schema/schema-version",
  rules: ["integration.observation-schema"],
  description: "Calls observe and looks for a schema version and well-formed action metadata in the observation.",
  note: "a SHOULD: its absence is a warning",
  async run(ctx) {
    const conn = await ctx.session();
    const reply = await ctx.call(conn, rpc("observe", {}, 1));
    const observation = resultOf(reply)?.observation as Record<string, unknown> | undefined;
    if (!observation || typeof observation !== "object")
      return judgedBy(
        { kind: "result", expect: [{ path: ["result", "observation"], is: "object" }] },
        fail("observe returned no observation object.", "observation: object", describeReply(reply)),
      );
    if (!("schemaVersion" in observation) || observation.schemaVersion === null)
      return warn("The observation carries no schemaVersion.", "observation.schemaVersion", describeReply(reply));
    const actions = observation.availableActions;
    if (actions !== undefined && !(Array.isArray(actions) && actions.every((a) => typeof a === "string"))) {
      return warn(
        "observation.availableActions is not a list of strings.",
        "availableActions: string[]",
        describeReply(reply),
      );
    }
    return pass(`The observation carries schemaVersion ${JSON.stringify(observation.schemaVersion)}.`);
  },
};

export const checks: Check[] = [observationSchema];
