import { type Check, describeReply, fail, pass, resultOf, rpc } from "../harness/check.js";

const STATUS_FIELDS: Record<string, (v: unknown) => boolean> = {
  running: (v) => typeof v === "boolean",
  host: (v) => typeof v === "string",
  port: (v) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 65535,
  queuedCommands: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  maxQueuedCommands: (v) => Number.isSafeInteger(v) && (v as number) > 0,
  events: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  maxEvents: (v) => Number.isSafeInteger(v) && (v as number) > 0,
  observationSeq: (v) => Number.isSafeInteger(v),
  lastError: (v) => typeof v === "string" || v === null,
};
const STATUS_TYPES =
  "{running: boolean, host: string, port: integer, queuedCommands: integer >= 0, maxQueuedCommands: integer > 0, events: integer >= 0, maxEvents: integer > 0, observationSeq: integer, lastError: string}";

export const statusShape: Check = {
  id: "method.status/shape",
  rules: ["method.status", "integration.bounded-state"],
  description: "Calls status and checks every field's JSON type and the occupancy invariants.",
  note: "limits are positive and occupancy stays within them",
  async run(ctx) {
    const conn = await ctx.session();
    const reply = await ctx.call(conn, rpc("status", {}, 1));
    const status = resultOf(reply);
    if (!status)
      return fail("status returned no result object.", STATUS_TYPES, describeReply(reply), ["method.status"]);
    for (const [field, ok] of Object.entries(STATUS_FIELDS)) {
      if (!(field in status))
        return fail(`status has no ${field}.`, STATUS_TYPES, describeReply(reply), [
          field.startsWith("max") ? "integration.bounded-state" : "method.status",
        ]);
      if (!ok(status[field]))
        return fail(
          `status.${field} is ${JSON.stringify(status[field])}, of the wrong type or range.`,
          STATUS_TYPES,
          describeReply(reply),
          [field.startsWith("max") ? "integration.bounded-state" : "method.status"],
        );
    }
    if ((status.queuedCommands as number) > (status.maxQueuedCommands as number))
      return fail(
        "status reports more queued commands than its limit.",
        "queuedCommands <= maxQueuedCommands",
        describeReply(reply),
        ["integration.bounded-state"],
      );
    if ((status.events as number) > (status.maxEvents as number))
      return fail("status reports more retained events than its limit.", "events <= maxEvents", describeReply(reply), [
        "integration.bounded-state",
      ]);
    return pass("status carries every field, well-typed, within its limits.");
  },
};

export const checks: Check[] = [statusShape];
