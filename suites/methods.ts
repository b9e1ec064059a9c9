import fc from "fast-check";
import { describeReply, errorCode, fail, pass, resultOf, rpc, skip, statusLimit, warn, type Check, type Finding } from "./check.js";
import { collectCompletions, latestSeq, readEvents } from "./events.js";
import { sleep } from "../runner/connection.js";

export const pingOk: Check = {
  id: "method.ping/ok",
  rules: ["method.ping"],
  description: "Calls ping on an authorized connection.",
  requirement: "Report bridge liveness after authorization: result {ok: true}.",
  async run(ctx) {
    const conn = await ctx.session();
    const reply = await ctx.call(conn, rpc("ping", {}, 1));
    if (resultOf(reply)?.ok === true) return pass("ping answered {\"ok\":true}.");
    return fail("ping was not answered {\"ok\":true}.", `{"result":{"ok":true}}`, describeReply(reply));
  },
};

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
const STATUS_TYPES = "{running: boolean, host: string, port: integer, queuedCommands: integer >= 0, maxQueuedCommands: integer > 0, events: integer >= 0, maxEvents: integer > 0, observationSeq: integer, lastError: string}";

export const statusShape: Check = {
  id: "method.status/shape",
  rules: ["method.status", "integration.bounded-state"],
  description: "Calls status and checks every field's JSON type and the occupancy invariants.",
  requirement: "Return transport state, queue/event occupancy and limits, latest observation sequence, and the last bridge error; queues and history have positive configured limits exposed through status.",
  async run(ctx) {
    const conn = await ctx.session();
    const reply = await ctx.call(conn, rpc("status", {}, 1));
    const status = resultOf(reply);
    if (!status) return fail("status returned no result object.", STATUS_TYPES, describeReply(reply), ["method.status"]);
    for (const [field, ok] of Object.entries(STATUS_FIELDS)) {
      if (!(field in status)) return fail(`status has no ${field}.`, STATUS_TYPES, describeReply(reply), [field.startsWith("max") ? "integration.bounded-state" : "method.status"]);
      if (!ok(status[field])) return fail(`status.${field} is ${JSON.stringify(status[field])}, of the wrong type or range.`, STATUS_TYPES, describeReply(reply), [field.startsWith("max") ? "integration.bounded-state" : "method.status"]);
    }
    if ((status.queuedCommands as number) > (status.maxQueuedCommands as number)) return fail("status reports more queued commands than its limit.", "queuedCommands <= maxQueuedCommands", describeReply(reply), ["integration.bounded-state"]);
    if ((status.events as number) > (status.maxEvents as number)) return fail("status reports more retained events than its limit.", "events <= maxEvents", describeReply(reply), ["integration.bounded-state"]);
    return pass("status carries every field, well-typed, within its limits.");
  },
};

export const observeSeq: Check = {
  id: "method.observe/sequence",
  rules: ["method.observe"],
  description: "Calls observe several times, with status and events between, and compares the sequences.",
  requirement: "Return the latest complete project-owned observation snapshot and its monotonically increasing replacement sequence: {observationSeq: integer, observation: object}.",
  async run(ctx) {
    const conn = await ctx.session();
    let last = -Infinity;
    for (let i = 0; i < 5; i++) {
      const reply = await ctx.call(conn, rpc("observe", {}, i));
      const r = resultOf(reply);
      if (!r || !Number.isSafeInteger(r.observationSeq) || typeof r.observation !== "object" || r.observation === null || Array.isArray(r.observation)) {
        return fail("observe did not return {observationSeq: integer, observation: object}.", "{observationSeq: integer, observation: object}", describeReply(reply));
      }
      if ((r.observationSeq as number) < last) return fail(`observationSeq went back from ${last} to ${r.observationSeq}.`, "observationSeq never decreases", describeReply(reply));
      last = r.observationSeq as number;
      await ctx.call(conn, rpc("status", {}, `s${i}`));
    }
    return pass("observe returned well-formed snapshots with a sequence that never decreased.");
  },
};

export const observationSchema: Check = {
  id: "integration.observation-schema/schema-version",
  rules: ["integration.observation-schema"],
  description: "Calls observe and looks for a schema version and well-formed action metadata in the observation.",
  requirement: "The observation object carries a project-owned schema version and enough readiness/action metadata for its adapter (a SHOULD: its absence is a warning).",
  async run(ctx) {
    const conn = await ctx.session();
    const reply = await ctx.call(conn, rpc("observe", {}, 1));
    const observation = resultOf(reply)?.observation as Record<string, unknown> | undefined;
    if (!observation || typeof observation !== "object") return fail("observe returned no observation object.", "observation: object", describeReply(reply));
    if (!("schemaVersion" in observation) || observation.schemaVersion === null) return warn("The observation carries no schemaVersion.", "observation.schemaVersion", describeReply(reply));
    const actions = observation.availableActions;
    if (actions !== undefined && !(Array.isArray(actions) && actions.every((a) => typeof a === "string"))) {
      return warn("observation.availableActions is not a list of strings.", "availableActions: string[]", describeReply(reply));
    }
    return pass(`The observation carries schemaVersion ${JSON.stringify(observation.schemaVersion)}.`);
  },
};

/** Makes `count` events by acting and waiting for their completions; returns the cursor before them. */
async function makeEvents(ctx: Parameters<Check["run"]>[0], count: number): Promise<number | Finding> {
  const conn = await ctx.session();
  const before = await latestSeq(ctx, conn);
  const accepted = new Set<number>();
  for (let i = 0; accepted.size < count && i < count * 50; i++) {
    const reply = await ctx.call(conn, rpc("act", { type: "conformance.noop" }, `make-${i}`));
    const seq = resultOf(reply)?.commandSeq;
    if (Number.isSafeInteger(seq)) accepted.add(seq as number);
    else if (errorCode(reply) === ctx.contract.codes["error.queue-full"]) await sleep(20);
    else return fail("act was not accepted, so no events could be made.", `{"accepted":true,"commandSeq":<integer>}`, describeReply(reply), ["method.act"]);
  }
  const done = await collectCompletions(ctx, conn, before, accepted);
  if ([...accepted].some((s) => !done.has(s))) return fail("Accepted commands did not complete, so no events could be made.", "a command_completed event per accepted command", `${[...accepted].filter((s) => !done.has(s)).length} of ${accepted.size} never completed`, ["integration.command-completion"]);
  conn.close();
  return before;
}

export const eventsCursor: Check = {
  id: "method.events/cursor-and-limit",
  rules: ["method.events"],
  description: "Completes a few commands to make events, then reads them with cursors at, between and past them, and with limits from very negative through 0 and 1 to far above 500.",
  requirement: "Return retained events with seq greater than afterSeq (exclusive) in ascending order; clamp limit to 1..500; latestSeq present even when nothing is newer.",
  async run(ctx) {
    const made = await makeEvents(ctx, 4);
    if (typeof made !== "number") return made;
    const conn = await ctx.session();
    const all = (await readEvents(ctx, conn, made)).events;
    if (all.length < 4) return fail(`Only ${all.length} events after the cursor, though 4 commands completed.`, "4 command_completed events", JSON.stringify(all).slice(0, 300));
    const seqs = all.map((e) => e.seq);
    const latest = (await readEvents(ctx, conn, made)).latestSeq;
    const atEnd = await readEvents(ctx, conn, latest);
    if (atEnd.events.length !== 0) return fail(`events after latestSeq ${latest} returned ${atEnd.events.length} events.`, "no events past latestSeq", JSON.stringify(atEnd.events).slice(0, 300));
    return ctx.property(
      fc.record({
        cursorAt: fc.integer({ min: 0, max: seqs.length - 1 }),
        limit: fc.oneof(fc.constantFrom(0, 1, 2, -1, 500, 501, 10_000), fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.constant(-(2 ** 31)), fc.constant(2 ** 31)),
      }),
      async ({ cursorAt, limit }) => {
        const c = await ctx.session();
        const afterSeq = seqs[cursorAt]!;
        const reply = await ctx.call(c, rpc("events", { afterSeq, limit }, "limit"));
        const r = resultOf(reply);
        const events = (r?.events ?? []) as { seq: number }[];
        const newer = seqs.filter((s) => s > afterSeq).length; // events we made after this cursor (others may exist too)
        const clamped = Math.min(Math.max(limit, 1), 500);
        if (!r || !Array.isArray(r.events)) return fail("events returned no events array.", "{latestSeq, events}", describeReply(reply));
        if (events.some((e) => e.seq <= afterSeq)) return fail(`events after ${afterSeq} included seq ${events.find((e) => e.seq <= afterSeq)!.seq}.`, `every seq > ${afterSeq} (exclusive cursor)`, describeReply(reply));
        if (events.length > clamped) return fail(`limit ${limit} returned ${events.length} events.`, `at most ${clamped} (limit clamped to 1..500)`, describeReply(reply));
        if (events.length < Math.min(clamped, newer)) return fail(`limit ${limit} returned ${events.length} events where ${Math.min(clamped, newer)} were due.`, `min(clamp(limit, 1, 500), events after the cursor) = ${Math.min(clamped, newer)}`, describeReply(reply));
        return pass("ok");
      },
    );
  },
};

export const historyBound: Check = {
  id: "method.events/history-bound",
  rules: ["method.events", "integration.bounded-state"],
  description: "Completes maxEvents + 5 commands (paced by the queue) and checks the oldest events are gone and the retained count stays within maxEvents.",
  requirement: "Command queues and retained event history have positive configured limits exposed through status [history is bounded by maxEvents].",
  async run(ctx) {
    const conn = await ctx.session();
    const maxEvents = await statusLimit(ctx, conn, "maxEvents");
    if (typeof maxEvents !== "number") return maxEvents;
    const needed = maxEvents + 5;
    // Measure the drain rate on a few commands before committing to the whole history.
    const t0 = Date.now();
    const first = await makeEvents(ctx, 5);
    if (typeof first !== "number") return first;
    const perCommand = (Date.now() - t0) / 5;
    if (perCommand * needed > ctx.timeBudgetMs) {
      return skip(`Completing ${needed} commands would take about ${Math.round(perCommand * needed / 1000)} s at this bridge's pace, over this profile's ${ctx.timeBudgetMs / 1000} s budget (--profile thorough allows more).`);
    }
    const made = await makeEvents(ctx, needed);
    if (typeof made !== "number") return made;
    const c = await ctx.session();
    const after = await readEvents(ctx, c, 0, 500);
    const st = resultOf(await ctx.call(c, rpc("status", {}, "status-after")));
    if (typeof st?.events === "number" && st.events > maxEvents) return fail(`status reports ${st.events} retained events, over maxEvents ${maxEvents}.`, `events <= ${maxEvents}`, JSON.stringify(st), ["integration.bounded-state"]);
    const retained = after.events.length;
    if (retained > maxEvents) return fail(`events returned ${retained} events, more than maxEvents ${maxEvents}.`, `at most ${maxEvents} retained`, `${retained}`, ["integration.bounded-state"]);
    if (after.events.some((e) => e.seq <= made) && maxEvents < needed) return fail(`After ${needed} newer events, events at or before seq ${made} are still retained.`, `the oldest events dropped (maxEvents ${maxEvents})`, `oldest retained seq ${after.events[0]?.seq}`, ["integration.bounded-state"]);
    return pass(`After ${needed} completions the history held ${retained} events (maxEvents ${maxEvents}).`);
  },
};

export const authSimultaneous: Check = {
  id: "method.auth/per-connection",
  rules: ["method.auth", "error.unauthorized"],
  description: "Authorizes one connection and, while it stays open, calls ping on a second one; skipped if the bridge serves one connection at a time.",
  requirement: "Authorization state is connection-local and never inferred from a prior or another connection: -32001 on the second connection.",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip("no token configured (--token-env): the bridge does not require one, so authorization is not exercised");
    const first = await ctx.session();
    const second = await ctx.connect({ alongside: true });
    const reply = await ctx.call(second, rpc("ping", {}, "second"), { timeoutMs: Math.min(ctx.timeoutMs, 1000) });
    first.close();
    if (reply.kind === "timeout") return skip("The bridge serves one connection at a time (the second got no answer while the first was open), as the contract allows.");
    if (errorCode(reply) === ctx.contract.codes["error.unauthorized"]) return pass("The second connection was unauthorized while the first was authorized.");
    return fail("A second connection was served without auth while another was authorized.", "-32001 on the second connection", describeReply(reply), ["error.unauthorized"]);
  },
};

export const methodChecks: Check[] = [pingOk, statusShape, observeSeq, observationSchema, eventsCursor, historyBound, authSimultaneous];
