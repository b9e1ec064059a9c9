import { lookup } from "node:dns/promises";
import { isIP, type Socket } from "node:net";
import type { Oracle } from "../../protocol/verdict.js";
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
  skip,
} from "../harness/check.js";
import { type Connection, sleep } from "../harness/connection.js";
import { readEvents } from "../harness/events.js";
import { ACCEPTED, judgedBy, seqAbove, statusLimit } from "../harness/expect.js";
import { plainCompletes } from "../harness/plain.js";
import { emptyQueue, Ledger } from "../integration/bounded-state.js";

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
const int = (name: string) => ({ path: ["result", name], is: "integer" as const });
const atLeast = (name: string, value: number) => ({ path: ["result", name], op: ">=" as const, than: { value } });
/** What statusShape holds a status reply to, as an oracle. */
const STATUS_ORACLE: Oracle = {
  kind: "result",
  expect: [
    { path: ["result", "running"], is: "boolean" },
    { path: ["result", "host"], is: "string" },
    int("port"),
    atLeast("port", 0),
    { path: ["result", "port"], op: "<=", than: { value: 65535 } },
    int("queuedCommands"),
    atLeast("queuedCommands", 0),
    int("maxQueuedCommands"),
    atLeast("maxQueuedCommands", 1),
    int("events"),
    atLeast("events", 0),
    int("maxEvents"),
    atLeast("maxEvents", 1),
    int("observationSeq"),
    { anyOf: [[{ path: ["result", "lastError"], is: "string" }], [{ path: ["result", "lastError"], equals: null }]] },
    { path: ["result", "queuedCommands"], op: "<=", than: { here: ["result", "maxQueuedCommands"] } },
    { path: ["result", "events"], op: "<=", than: { here: ["result", "maxEvents"] } },
  ],
};
const STATUS_TYPES =
  "{running: boolean, host: string, port: integer, queuedCommands: integer >= 0, maxQueuedCommands: integer > 0, " +
  "events: integer >= 0, maxEvents: integer > 0, observationSeq: integer, lastError: string}";

export const statusShape: Check = {
  id: "method.status/shape",
  rules: ["method.status", "integration.bounded-state"],
  description: "Calls status and checks every field's JSON type and the occupancy invariants.",
  note: "limits are positive and occupancy stays within them",
  async run(ctx) {
    const conn = await ctx.session();
    const reply = await ctx.call(conn, rpc("status", {}, 1));
    const status = resultOf(reply);
    const judgedFail = (...args: Parameters<typeof fail>) => judgedBy(STATUS_ORACLE, fail(...args));
    if (!status)
      return judgedFail("status returned no result object.", STATUS_TYPES, describeReply(reply), ["method.status"]);
    for (const [field, ok] of Object.entries(STATUS_FIELDS)) {
      if (!(field in status))
        return judgedFail(`status has no ${field}.`, STATUS_TYPES, describeReply(reply), [
          field.startsWith("max") ? "integration.bounded-state" : "method.status",
        ]);
      if (!ok(status[field]))
        return judgedFail(
          `status.${field} is ${JSON.stringify(status[field])}, of the wrong type or range.`,
          STATUS_TYPES,
          describeReply(reply),
          [field.startsWith("max") ? "integration.bounded-state" : "method.status"],
        );
    }
    if ((status.queuedCommands as number) > (status.maxQueuedCommands as number))
      return judgedFail(
        "status reports more queued commands than its limit.",
        "queuedCommands <= maxQueuedCommands",
        describeReply(reply),
        ["integration.bounded-state"],
      );
    if ((status.events as number) > (status.maxEvents as number))
      return judgedFail(
        "status reports more retained events than its limit.",
        "events <= maxEvents",
        describeReply(reply),
        ["integration.bounded-state"],
      );
    return pass("status carries every field, well-typed, within its limits.");
  },
};

/**
 * The address a connection reached: the endpoint this tool was pointed at, as connected.
 * The harness keeps the socket to itself; its peer is read here until the connection exposes it.
 */
function peerOf(conn: Connection): { address: string; port: number } | undefined {
  const socket = (conn as unknown as { socket?: Socket }).socket;
  const { remoteAddress: address, remotePort: port } = socket ?? {};
  return typeof address === "string" && typeof port === "number" ? { address, port } : undefined;
}

/** An IPv4 address as it may appear mapped into IPv6, reduced to one spelling. */
const plain = (address: string) => address.toLowerCase().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");

/** A bound host that listens on every address of its family: it serves the endpoint too. */
const WILDCARDS = new Set(["0.0.0.0", "::", "::0", "0:0:0:0:0:0:0:0"]);

/** Whether the host status names is the address connected to: the same address, a wildcard, or a name for it. */
async function namesAddress(host: string, address: string, timeoutMs: number): Promise<boolean> {
  if (isIP(host)) return WILDCARDS.has(host.toLowerCase()) || plain(host) === plain(address);
  if (host === "") return false;
  const resolved = await Promise.race([
    lookup(host, { all: true }).catch(() => []),
    new Promise<{ address: string }[]>((resolve) => setTimeout(() => resolve([]), timeoutMs).unref()),
  ]);
  return resolved.some((r) => plain(r.address) === plain(address));
}

export const statusEndpoint: Check = {
  id: "method.status/endpoint",
  rules: ["method.status"],
  description: "Calls status and compares its host and port with the address and port this connection reached.",
  note:
    "status reports the transport state: the host and port it serves, which are the endpoint connected to " +
    "(a wildcard bind host or a name resolving to that address counts as the same)",
  async run(ctx) {
    const conn = await ctx.session();
    const peer = peerOf(conn);
    if (!peer)
      return skip("The address this connection reached could not be read, so status host and port cannot be compared.");
    const reply = await ctx.call(conn, rpc("status", {}, "endpoint"));
    const status = resultOf(reply);
    const shown = `${describeReply(reply)} (connected to ${peer.address} port ${peer.port})`;
    const oracle: Oracle = {
      kind: "result",
      expect: [
        { path: ["result", "port"], op: "==", than: { peer: "port" } },
        { path: ["result", "host"], namesPeer: true },
      ],
    };
    const judgedFail = (...args: Parameters<typeof fail>) => judgedBy(oracle, fail(...args));
    if (status?.port !== peer.port)
      return judgedFail(
        `status.port is ${JSON.stringify(status?.port)}, but this connection reached port ${peer.port}.`,
        `port: ${peer.port}`,
        shown,
      );
    if (typeof status.host !== "string" || !(await namesAddress(status.host, peer.address, ctx.timeoutMs)))
      return judgedFail(
        `status.host is ${JSON.stringify(status.host)}, which is not the address this connection reached ` +
          `(${peer.address}).`,
        `host: ${peer.address}, a wildcard it is bound through, or a name resolving to it`,
        shown,
      );
    return pass(`status names the endpoint connected to: ${status.host} port ${status.port}.`);
  },
};

/** How many commands this check sends, never more outstanding than maxQueuedCommands. */
const QUEUED_SAMPLE = 4;
/** How many samples' worth of acts the check makes at most while no reading has seen a command queued. */
const QUEUED_ROUNDS = 4;
/** The type this check acts with; a plain command of it is known to complete before the count is judged. */
const QUEUED = "conformance.queued";

export const statusQueued: Check = {
  id: "method.status/queued-commands",
  rules: ["method.status", "integration.bounded-state"],
  needs: ["completions"],
  description:
    `Waits for an empty queue, acts ${QUEUED_SAMPLE} times (up to ${QUEUED_SAMPLE * QUEUED_ROUNDS} until a status ` +
    "is served while one is queued; never more outstanding than maxQueuedCommands), " +
    "reading status after each act and then after each completion until all completed, with events read before " +
    "and after every status call.",
  note:
    "queuedCommands counts accepted commands not yet completed: never more than the completions read before it " +
    "leave outstanding, never fewer than the events read after it allow, never above maxQueuedCommands",
  async run(ctx) {
    const conn = await ctx.session();
    const max = await statusLimit(ctx, conn, "maxQueuedCommands");
    if (typeof max !== "number") return max;
    const busy = (await emptyQueue(ctx, conn)) ?? (await plainCompletes(ctx, conn, QUEUED));
    if (busy) return busy;
    const ledger = await Ledger.open(ctx, conn);
    let samples = 0;
    /** Readings served while one of this check's commands was provably still queued: the state the rule speaks of. */
    let held = 0;
    const judge = async (): Promise<Finding | undefined> => {
      const at = `status-${samples++}`;
      const sent = await ledger.send(rpc("status", {}, at));
      if (sent.atLeast > 0) held++;
      return judgeQueued(sent, ledger, max, at);
    };
    // Act whenever the queue has room by this check's count, reading status after every act and completion.
    let acts = 0;
    const actedAs = new Map<number, string>();
    let wrong: Finding | undefined;
    const until = () => Date.now() + ctx.timeoutMs * 2;
    let quietUntil = until();
    // A game loop that completes each command before the status after it is served shows no queue: act again,
    // up to QUEUED_ROUNDS times the sample, until a reading lands while a command is queued.
    const acting = () => acts < QUEUED_SAMPLE || (held === 0 && acts < QUEUED_SAMPLE * QUEUED_ROUNDS);
    while (!wrong && (acting() || ledger.pending.length > 0) && Date.now() < quietUntil) {
      if (acting() && ledger.atMost < max) {
        const id = `act-${acts}`;
        const { reply, commandSeq } = await ledger.send(rpc("act", { type: QUEUED, intArg: acts }, id));
        acts++;
        if (commandSeq === undefined && errorCode(reply) !== ctx.contract.codes["error.queue-full"])
          return fail("act was not accepted.", `{"accepted":true,"commandSeq":<integer>}`, describeReply(reply), [
            "method.act",
          ]);
        // Two acceptances under one commandSeq: no count of commands can be followed (act's fault, not status's).
        const first = commandSeq === undefined ? undefined : actedAs.get(commandSeq);
        if (first !== undefined)
          return judgedBy(
            { kind: "result", expect: [seqAbove(first)], at: id },
            fail(
              `act answered commandSeq ${commandSeq} again, as it did to ${first}.`,
              "a new commandSeq for every accepted command",
              describeReply(reply),
              ["method.act"],
            ),
          );
        if (commandSeq !== undefined) actedAs.set(commandSeq, id);
        wrong = await judge();
      } else if (await ledger.poll()) {
        quietUntil = until();
        wrong = await judge();
      } else await sleep(2);
    }
    wrong ??= await judge(); // all completed: the count is back to zero
    if (wrong) return wrong;
    if (ledger.foreign > 0)
      return skip(
        `Completions of ${ledger.foreign} commands this check did not send arrived meanwhile: other traffic ` +
          "shares the queue, so its count cannot be checked against this check's commands.",
      );
    if (ledger.pending.length > 0)
      return skip(
        `${ledger.pending.length} of this check's commands showed no completion, so queuedCommands could not be ` +
          "followed back to zero (integration.command-completion judges completion).",
      );
    if (held === 0)
      return skip(
        `None of ${samples} status readings was served while one of this check's ${acts} commands was provably ` +
          "still queued (the bridge completed each before the next request), so a count above zero was never seen.",
      );
    return pass(
      `queuedCommands agreed with the commands accepted and not completed in ${samples} readings, ` +
        `back to 0 once all ${ledger.accepted.size} completed.`,
    );
  },
};

/** One status reading judged against the commands this check's ledger counts outstanding around it. */
function judgeQueued(
  sent: Awaited<ReturnType<Ledger["send"]>>,
  ledger: Ledger,
  max: number,
  at: string,
): Finding | undefined {
  const { reply, atMost, atLeast } = sent;
  const judgedFail = (...args: Parameters<typeof fail>) =>
    judgedBy(
      {
        kind: "ledger",
        judge: "status",
        start: "cursor",
        limitFrom: "status",
        codes: [],
        at,
        more: QUEUED_SAMPLE,
        act: { type: QUEUED },
      },
      fail(...args),
    );
  const queued = resultOf(reply)?.queuedCommands;
  const shown =
    `${describeReply(reply)} (${ledger.accepted.size} accepted; ` +
    `${atLeast}..${atMost} outstanding by the events read around it)`;
  if (typeof queued !== "number")
    return judgedFail("status gives no integer queuedCommands.", "queuedCommands: integer >= 0", shown, [
      "method.status",
    ]);
  if (ledger.foreign > 0) return undefined; // other traffic: its commands count too
  if (queued > max)
    return judgedFail(
      `status reports ${queued} queued commands, over maxQueuedCommands ${max}.`,
      `queuedCommands <= ${max}`,
      shown,
      ["integration.bounded-state"],
    );
  if (queued > atMost)
    return judgedFail(
      `status reports ${queued} queued commands, but at most ${atMost} accepted commands had not completed.`,
      `queuedCommands <= ${atMost}`,
      shown,
      ["method.status"],
    );
  if (queued < atLeast)
    return judgedFail(
      `status reports ${queued} queued commands, but at least ${atLeast} accepted commands had not completed.`,
      `queuedCommands >= ${atLeast}`,
      shown,
      ["method.status"],
    );
  return undefined;
}

export const statusSequences: Check = {
  id: "method.status/sequences",
  rules: ["method.status", "method.events"],
  needs: ["completions"],
  description:
    "Calls observe, status and observe again, makes sure at least one event exists, then reads the whole history " +
    "from the start, paging with the cursor, and reads past its end.",
  note:
    "status.observationSeq is the latest observation sequence, so it lies between the observe before and the one " +
    "after; latestSeq is the newest retained event's seq",
  async run(ctx) {
    const conn = await ctx.session();
    const seqOf = async (method: string, id: string) => {
      const reply = await ctx.call(conn, rpc(method, {}, id));
      return { reply, seq: resultOf(reply)?.observationSeq };
    };
    const before = await seqOf("observe", "observe-before");
    const status = await seqOf("status", "status");
    const after = await seqOf("observe", "observe-after");
    for (const [r, rule, at] of [
      [status, "method.status", "status"],
      [before, "method.observe", "observe-before"],
      [after, "method.observe", "observe-after"],
    ] as const)
      if (!Number.isSafeInteger(r.seq))
        return judgedBy(
          { kind: "result", expect: [{ path: ["result", "observationSeq"], is: "integer" }], at },
          fail("No integer observationSeq.", "observationSeq: integer", describeReply(r.reply), [rule]),
        );
    const [a, b, c] = [before.seq as number, status.seq as number, after.seq as number];
    const seqAt = ["result", "observationSeq"];
    const between: Oracle = {
      kind: "result",
      expect: [
        { path: seqAt, op: ">=", than: { ref: "observe-before", path: seqAt } },
        { of: "status", path: seqAt, op: ">=", than: { ref: "observe-before", path: seqAt } },
        { path: seqAt, op: ">=", than: { ref: "status", path: seqAt } },
      ],
    };
    if (c < a)
      return judgedBy(
        between,
        fail(
          `observationSeq went back from ${a} to ${c} between two observe calls.`,
          "observationSeq never decreases",
          describeReply(after.reply),
          ["method.observe"],
        ),
      );
    if (b < a || b > c)
      return judgedBy(
        { ...between, at: "observe-after" },
        fail(
          `status.observationSeq ${b} is not between the observationSeq of the observe before (${a}) and after (${c}).`,
          `${a} <= status.observationSeq <= ${c}`,
          describeReply(status.reply),
          ["method.status"],
        ),
      );
    // latestSeq can only be compared with a retained event: make one where the history is empty.
    const limit = ctx.contract.limits.eventsLimitMax;
    const noEvent = await ensureEvent(ctx, conn);
    if (noEvent) return noEvent;
    const maxEvents = await statusLimit(ctx, conn, "maxEvents");
    if (typeof maxEvents !== "number") return maxEvents;
    let cursor = 0;
    let newest: number | undefined;
    for (let page = 0; page < Math.ceil(maxEvents / limit) + 3; page++) {
      const r = await readEvents(ctx, conn, cursor, limit); // judges latestSeq >= every seq returned
      if (r.events.length > 0) cursor = newest = r.events.at(-1)!.seq;
      if (r.events.length === limit) continue;
      // The last page holds the newest event, which eviction never removes: latestSeq names it.
      if (newest !== undefined && r.latestSeq > newest) {
        // An event may have arrived between pages; read past the newest seen before judging.
        const rest = await readEvents(ctx, conn, newest, limit);
        if (rest.events.length > 0) continue;
        return latestBeyond(newest, rest.latestSeq);
      }
      if (newest === undefined)
        return skip(
          `status.observationSeq ${b} lies between observe's ${a} and ${c}, but no event is retained, ` +
            "so latestSeq has no event to name (integration.command-completion judges completion).",
        );
      return pass(
        `status.observationSeq ${b} lies between observe's ${a} and ${c}; ` +
          `latestSeq ${r.latestSeq} names the newest retained event.`,
      );
    }
    return skip("The history kept growing while it was paged, so its end was not reached.");
  },
};

/** Makes sure the history holds an event to compare latestSeq with, making one where it is empty. */
async function ensureEvent(ctx: CheckContext, conn: Connection): Promise<Finding | undefined> {
  if ((await readEvents(ctx, conn, 0, 1)).events.length > 0) return undefined;
  const busy = await emptyQueue(ctx, conn);
  if (busy) return busy;
  const ledger = await Ledger.open(ctx, conn);
  const made = await ledger.send(rpc("act", { type: "conformance.sequence" }, "act"));
  if (made.commandSeq === undefined)
    return judgedBy(
      { kind: "result", expect: ACCEPTED },
      fail("act was not accepted, so no event could be made.", "accepted", describeReply(made.reply), ["method.act"]),
    );
  await ledger.drain();
  return undefined;
}

/** latestSeq past the newest retained event, none being retained after it. */
function latestBeyond(newest: number, latestSeq: number): Finding {
  const latest = ["result", "latestSeq"];
  return judgedBy(
    {
      kind: "result",
      expect: [
        {
          anyOf: [
            [{ path: ["result", "events", "#"], op: ">", than: { value: 0 } }],
            [{ path: latest, op: "<=", than: { value: newest } }],
          ],
        },
      ],
    },
    fail(
      `latestSeq is ${latestSeq}, but no event after seq ${newest} is retained.`,
      "latestSeq = the newest retained seq",
      `events after ${newest}: none; latestSeq ${latestSeq}`,
      ["method.events"],
    ),
  );
}

export const checks: Check[] = [statusShape, statusEndpoint, statusQueued, statusSequences];
