// One deep session: the model of the bridge's state over one or two connections, the real
// connections, and every step a generated sequence may take. Each step acts, then judges what
// came back against the contract and the model (the shared judges do the envelope, events and
// completions), and reports the state cells it reached.

import type { Command } from "../../generators/command.js";
import type { CursorAim, Slot, Step } from "../../generators/sessionStep.js";
import type { RuleId } from "../../protocol/contract.js";
import { AUTH_FAILURES, type Coverage, cursorCell, historyCell, idCell, queueCells } from "./cells.js";
import {
  type CheckContext,
  describeReply,
  errorCode,
  type Finding,
  type Reply,
  resultOf,
  rpc,
  violation,
} from "./check.js";
import type { Connection } from "./connection.js";
import type { LoopAllowance } from "./deep/pace.js";
import { Backoff, type Completion, collectCompletions, type EventsResult, judgeEvents, readEvents } from "./events.js";
import { judgeCompletion } from "./lifecycle.js";

/** The command type fills use: unknown to every bridge, so it completes (as a failure) without side effects. */
const FILL_TYPE = "conformance.fill";
/** The bytes before a request's string id, as rpc() lays the request out. */
const ID_OFFSET = Buffer.byteLength('{"jsonrpc":"2.0","id":"');

/** The cell an act with extreme values of a field kind reaches (booleans have no extremes beyond their two values). */
const EXTREME_CELL: Record<string, string> = {
  integer: "command.extreme-integers",
  identifier: "command.extreme-identifiers",
  string: "command.extreme-strings",
};

/**
 * The bridge's history as the check has seen it since the bridge last started (cells only; no verdict rests on it):
 * a case starts on a fresh bridge where this tool owns one, so this is the case's own; at an endpoint it spans cases.
 */
export interface Life {
  /** Advertised command types acted so far. */
  typesActed: Set<string>;
  /** Events evicted from the history: false none (it was seen below maxEvents), true some, undefined not known. */
  evicted: boolean | undefined;
  /** latestSeq when the history was first seen full: events after it evict older ones. */
  fullAt?: number;
}

export const newLife = (typesActed = new Set<string>()): Life => ({ typesActed, evicted: undefined });

interface SlotState {
  conn?: Connection;
  /** undefined: not known (after a wrong token on an authorized connection, whose effect the contract leaves open). */
  auth: boolean | undefined;
  failures: number;
  authorizedOnce: boolean;
  lastId?: unknown;
  served: number;
}

interface Status {
  queuedCommands: number;
  maxQueuedCommands: number;
  events: number;
  maxEvents: number;
  observationSeq: number;
}

const check = (ok: boolean, rule: RuleId, message: string, expected: string, actual: string): void => {
  if (!ok) throw violation(rule, message, expected, actual);
};

export class DeepSession {
  private readonly slots: SlotState[] = [];
  /** Accepted commands of this case by commandSeq, and the completions read for them. */
  readonly accepted = new Map<number, Command>();
  private readonly completions = new Map<number, Completion[]>();
  private unseen = 0;
  private followCursor = 0;
  private commandSeq = Number.NEGATIVE_INFINITY;
  private observationSeq = Number.NEGATIVE_INFINITY;
  private limits?: { maxQueuedCommands: number; maxEvents: number };
  private lastSlot?: Slot;
  private justRejected = false;
  private lastAppend = false;
  private nextId = 0;

  private constructor(
    private readonly ctx: CheckContext,
    private readonly cov: Coverage,
    private readonly life: Life,
    private readonly types: readonly string[],
    private readonly two: boolean,
    private readonly pace: LoopAllowance,
  ) {}

  /** Opens the session's connections (authorized) and reads where the bridge stands. */
  static async open(
    ctx: CheckContext,
    cov: Coverage,
    life: Life,
    types: readonly string[],
    two: boolean,
    pace: LoopAllowance,
  ): Promise<DeepSession> {
    const s = new DeepSession(ctx, cov, life, types, two, pace);
    await s.openSlot(0, true);
    if (two) await s.openSlot(1, true);
    const status = await s.status(0);
    if (status && status.events < status.maxEvents) life.evicted = false;
    if (status?.maxEvents === 1)
      cov.cannot(["history.below-max", "cursor.inside"], "the history holds a single event (maxEvents 1)");
    s.followCursor = (await s.eventsCall(0, 0, 1))?.latestSeq ?? 0;
    return s;
  }

  // ---- connections and calls ----

  private async openSlot(slot: Slot, authorize: boolean, rule: RuleId = "validation.protocol-smoke"): Promise<void> {
    this.slots[slot]?.conn?.close();
    const conn = await this.ctx.connect(this.two ? { alongside: true } : {});
    const state: SlotState = { conn, auth: !this.ctx.tokenConfigured, failures: 0, authorizedOnce: false, served: 0 };
    this.slots[slot] = state;
    if (authorize && this.ctx.tokenConfigured) {
      const reply = await this.ctx.call(conn, this.ctx.authRequest(`deep-auth-${++this.nextId}`));
      check(
        resultOf(reply)?.authorized === true,
        rule,
        "auth with the configured token on a new connection was not answered {authorized:true}.",
        `{"authorized":true}`,
        describeReply(reply),
      );
      Object.assign(state, { auth: true, authorizedOnce: true });
    }
  }

  private conn(slot: Slot): Connection {
    return this.slots[slot]!.conn!;
  }

  /** One request on a slot, judged by the harness (envelope, id echo) and against the slot's authorization. */
  private async call(
    slot: Slot,
    method: string,
    params: Record<string, unknown>,
    o: { id?: unknown; hasId?: boolean } = {},
  ): Promise<Reply> {
    const s = this.slots[slot]!;
    const id = o.hasId ? o.id : `deep-${++this.nextId}`;
    if (method !== "auth") {
      if (s.auth === false && s.failures === 0 && !s.authorizedOnce) this.cov.reach("auth.none");
      if (s.failures >= 1) this.cov.reach("auth.after-one-failure");
      if (s.failures >= AUTH_FAILURES) this.cov.reach("auth.after-failures");
    }
    const reply = await this.ctx.call(this.conn(slot), rpc(method, params, id));
    s.lastId = id;
    if (++s.served >= 3) this.cov.reach("conn.one");
    if (this.lastSlot !== undefined && this.lastSlot !== slot && this.slots[this.lastSlot]?.conn?.closed === false)
      this.cov.reach("conn.two-interleaved");
    this.lastSlot = slot;
    check(
      reply.kind === "response",
      "validation.protocol-smoke",
      `${method} got no reply.`,
      "a response",
      describeReply(reply),
    );
    if (method !== "auth") this.judgeAuthorization(slot, method, reply);
    return reply;
  }

  private judgeAuthorization(slot: Slot, method: string, reply: Reply): void {
    const s = this.slots[slot]!;
    const code = this.ctx.contract.codes["error.unauthorized"];
    const refused = errorCode(reply) === code;
    if (s.auth === undefined) s.auth = !refused;
    if (s.auth === false)
      check(
        refused,
        "error.unauthorized",
        `${method} on a connection that is not authorized (${s.failures} wrong token(s) sent) was not rejected with ${code}.`,
        String(code),
        describeReply(reply),
      );
    else
      check(
        !refused,
        "method.auth",
        `${method} on an authorized connection was rejected with ${code}.`,
        "served",
        describeReply(reply),
      );
  }

  /** Whether the slot is authorized now (authorizing it if not known). */
  private async authorized(slot: Slot): Promise<void> {
    if (this.slots[slot]!.auth !== true) await this.auth(slot, true, 1);
  }

  // ---- the steps ----

  async step(step: Step): Promise<void> {
    switch (step.kind) {
      case "act":
        await this.act(step.slot, step.command, step.extreme);
        break;
      case "appends":
        for (let i = 0; i < step.count; i++) await this.act(step.slot, { type: step.type, append: true });
        break;
      case "fill-queue":
        await this.fillQueue(step.slot);
        break;
      case "status":
        await this.status(step.slot);
        break;
      case "observe":
        await this.observe(step.slot);
        break;
      case "events":
        await this.events(step.slot, step.cursor, step.limit);
        break;
      case "fill-history":
        await this.fillHistory(step.slot, step.extra);
        await this.events(step.slot, step.cursor, 2);
        break;
      case "auth":
        await this.auth(step.slot, step.right, step.times);
        break;
      case "reconnect":
        await this.reconnect(step.slot, step.authorize);
        break;
      case "churn":
        await this.churn(step.count);
        break;
      case "half-close":
        await this.halfClose(step.slot);
        break;
      case "partial-close":
        await this.partialClose(step.slot, step.text);
        break;
      case "ping":
        for (const id of step.ids) await this.ping(step.slot, id, false);
        if (step.repeat) await this.ping(step.slot, undefined, true);
        break;
      case "long-line":
        for (const kib of step.kibs) await this.boundaryLine(step.slot, kib, step.char);
        break;
      case "split-char":
        await this.boundaryLine(step.slot, 0, step.char);
        break;
      case "race-acts":
        await this.raceActs(step.count);
        break;
      case "race-observe":
        await this.raceObserve();
        break;
      case "race-status":
        await this.raceStatus();
        break;
    }
    await this.follow();
  }

  /** act; what became of it. A full queue and (for extreme values) invalid params are outcomes, not faults. */
  private async act(slot: Slot, command: Command, extreme?: string[]): Promise<"accepted" | "full" | "refused"> {
    const reply = await this.call(slot, "act", command);
    if (this.slots[slot]!.auth === false) return "refused";
    const { codes } = this.ctx.contract;
    if (this.justRejected) this.cov.reach("queue.after-rejection");
    if (errorCode(reply) === codes["error.queue-full"]) {
      this.cov.reach("queue.full");
      this.justRejected = true;
      return "full";
    }
    this.justRejected = false;
    for (const kind of extreme ?? []) if (EXTREME_CELL[kind]) this.cov.reach(EXTREME_CELL[kind]);
    // Which identifier values a project accepts is its own choice; so is refusing an integer it cannot hold.
    if (extreme?.length && errorCode(reply) === codes["error.invalid-params"]) return "refused";
    const r = resultOf(reply);
    const seq = r?.commandSeq;
    check(
      r?.accepted === true && Number.isSafeInteger(seq),
      "method.act",
      `act ${JSON.stringify(command).slice(0, 120)} was not accepted.`,
      `{"accepted":true,"commandSeq":<integer>}`,
      describeReply(reply),
    );
    check(
      (seq as number) > this.commandSeq,
      "method.act",
      `commandSeq went from ${this.commandSeq} to ${seq}.`,
      "commandSeq increasing",
      describeReply(reply),
    );
    this.commandSeq = seq as number;
    this.accepted.set(seq as number, command);
    this.pace.spent++;
    this.noteActed(command);
    return "accepted";
  }

  private noteActed(command: Command): void {
    if (!this.types.includes(command.type)) this.cov.reach("command.unknown-type");
    else this.life.typesActed.add(command.type);
    if (this.types.length && this.types.every((t) => this.life.typesActed.has(t)))
      this.cov.reach("command.every-advertised-type");
    if (command.append === true && this.lastAppend) this.cov.reach("command.consecutive-appends");
    this.lastAppend = command.append === true;
  }

  /** Acts until the queue is full; right after, acts again; once status shows room, an act must be accepted. */
  private async fillQueue(slot: Slot): Promise<void> {
    const limits = this.limits;
    if (!limits || this.slots[slot]!.auth !== true) return;
    const max = limits.maxQueuedCommands;
    // Filled, freed and filled again: a queue's worth of turns and a few more.
    if (!this.pace.affords(max + 8, "fill-queue")) {
      this.cov.cannot(["queue.full", "queue.after-rejection", "queue.refilled"], this.pace.reason(max + 8));
      return;
    }
    let full = false;
    for (let i = 0; i < max * 4 + 16 && !full; i++) {
      const outcome = await this.act(slot, { type: FILL_TYPE });
      if (outcome === "refused") return;
      full = outcome === "full";
      if (!full) await this.status(slot);
    }
    if (!full) return; // the bridge drains faster than one client fills: nothing to judge
    await this.act(slot, { type: FILL_TYPE });
    const until = Date.now() + this.ctx.timeoutMs * 2;
    const pause = new Backoff();
    let status = await this.status(slot);
    while (status && status.queuedCommands >= max) {
      check(
        Date.now() < until,
        "integration.command-completion",
        `The queue stayed full for ${this.ctx.timeoutMs * 2} ms: queued commands are not completing.`,
        "a full queue drains as the bridge completes its commands",
        JSON.stringify(status),
      );
      await pause.wait(until);
      status = await this.status(slot);
    }
    if (!status) return;
    const outcome = await this.act(slot, { type: FILL_TYPE });
    check(
      outcome !== "full",
      "error.queue-full",
      `act was rejected as full right after status reported ${status.queuedCommands} of ${max} queued (the queue had been full and drained).`,
      "accepted: the queue has room",
      `${this.ctx.contract.codes["error.queue-full"]}`,
    );
    // And full once more: a queue that rejected and drained fills and rejects again.
    for (let i = 0; i < max + 8; i++) {
      const again = await this.act(slot, { type: FILL_TYPE });
      if (again === "refused") return;
      if (again === "full") {
        this.cov.reach("queue.refilled");
        return;
      }
    }
  }

  /** status, judged: occupancy within the limits it advertises, limits that hold still, observationSeq never back. */
  private async status(slot: Slot): Promise<Status | undefined> {
    const reply = await this.call(slot, "status", {});
    if (this.slots[slot]!.auth === false) return undefined;
    const r = resultOf(reply) ?? {};
    const shown = JSON.stringify(r).slice(0, 300);
    const keys = ["queuedCommands", "maxQueuedCommands", "events", "maxEvents", "observationSeq"] as const;
    check(
      keys.every((k) => Number.isSafeInteger(r[k])),
      "method.status",
      "status lacks an integer occupancy, limit or observationSeq.",
      keys.map((k) => `${k}: integer`).join(", "),
      shown,
    );
    const st = r as unknown as Status;
    check(
      st.queuedCommands >= 0 &&
        st.queuedCommands <= st.maxQueuedCommands &&
        st.events >= 0 &&
        st.events <= st.maxEvents,
      "integration.bounded-state",
      "status reports occupancy outside the limits it advertises.",
      "0 <= queuedCommands <= maxQueuedCommands, 0 <= events <= maxEvents",
      shown,
    );
    this.limits ??= { maxQueuedCommands: st.maxQueuedCommands, maxEvents: st.maxEvents };
    check(
      st.maxQueuedCommands === this.limits.maxQueuedCommands && st.maxEvents === this.limits.maxEvents,
      "method.status",
      "status changed the limits it advertises in the middle of a session.",
      JSON.stringify(this.limits),
      shown,
    );
    this.advanceObservation(st.observationSeq, "method.status", shown);
    for (const cell of queueCells(st.queuedCommands, st.maxQueuedCommands)) this.cov.reach(cell);
    if (st.events === st.maxEvents && this.life.evicted !== true) {
      // Full: exactly, where it was seen below maxEvents and nothing came since it filled (note latestSeq), or
      // evicting once events came after it was first seen full (whether or not it was seen filling up).
      const latest = (await this.eventsCall(slot, 0, 1))?.latestSeq;
      if (latest !== undefined && this.life.fullAt === undefined) this.life.fullAt = latest;
      else if (latest !== undefined && latest > this.life.fullAt!) this.life.evicted = true;
    }
    const cell = historyCell(st.events, st.maxEvents, this.life.evicted);
    if (cell) this.cov.reach(cell);
    return st;
  }

  private advanceObservation(seq: unknown, rule: RuleId, shown: string): void {
    check(
      Number.isSafeInteger(seq) && (seq as number) >= this.observationSeq,
      rule,
      `observationSeq ${seq} is below one seen before (${this.observationSeq}).`,
      "observationSeq never decreases",
      shown,
    );
    this.observationSeq = seq as number;
  }

  private async observe(slot: Slot): Promise<void> {
    const reply = await this.call(slot, "observe", {});
    if (this.slots[slot]!.auth === false) return;
    const r = resultOf(reply);
    this.advanceObservation(r?.observationSeq, "method.observe", describeReply(reply));
  }

  private async eventsCall(slot: Slot, afterSeq: number, limit: number): Promise<EventsResult | undefined> {
    const reply = await this.call(slot, "events", { afterSeq, limit });
    if (this.slots[slot]!.auth === false) return undefined;
    const page = judgeEvents(resultOf(reply), afterSeq, describeReply(reply));
    const { eventsLimitMin: lo, eventsLimitMax: hi } = this.ctx.contract.limits;
    check(
      page.events.length <= Math.min(Math.max(limit, lo), hi),
      "method.events",
      `events with limit ${limit} returned ${page.events.length} events.`,
      `limit clamped to ${lo}..${hi}`,
      `${page.events.length} events`,
    );
    return page;
  }

  /**
   * Reads the window from the oldest retained event, then the events after a cursor placed against it. When nothing
   * happened between the two reads (latestSeq unchanged), the second must be the window's continuation after the
   * cursor: the same seqs and events, none skipped.
   */
  private async events(slot: Slot, aim: CursorAim, limit: number): Promise<void> {
    const window = await this.eventsCall(slot, 0, this.ctx.contract.limits.eventsLimitMax);
    if (!window) return;
    const oldest = window.events[0]?.seq;
    const newest = window.latestSeq;
    const mid = window.events[Math.floor((window.events.length - 1) / 2)]?.seq;
    const at: Record<CursorAim, number | undefined> = {
      zero: 0,
      "before-oldest": oldest !== undefined && oldest > 2 ? oldest - 2 : undefined,
      "at-oldest": oldest !== undefined ? oldest - 1 : undefined,
      inside: mid !== undefined && mid < newest ? mid : undefined,
      "at-newest": newest,
      "past-newest": newest + 3,
    };
    const cursor = at[aim] ?? newest;
    const cell = cursorCell(cursor, oldest, newest);
    if (cell) this.cov.reach(cell);
    const page = await this.eventsCall(slot, cursor, limit);
    if (!page || page.latestSeq !== window.latestSeq) return;
    const expected = window.events.filter((e) => e.seq > cursor);
    const shown = `after ${cursor}: ${JSON.stringify(page.events.map((e) => e.seq))}; the window just read: ${oldest}..${window.events.at(-1)?.seq} (latestSeq ${newest})`;
    check(
      !expected.length || page.events.length > 0,
      "method.events",
      `events after ${cursor} returned nothing while the history retains newer events.`,
      `events from seq ${expected[0]?.seq}`,
      shown,
    );
    for (let i = 0; i < Math.min(expected.length, page.events.length); i++) {
      const want = expected[i]!;
      const got = page.events[i]!;
      check(
        got.seq === want.seq && JSON.stringify(got.event) === JSON.stringify(want.event),
        "method.events",
        `events after ${cursor} returned seq ${got.seq} where the retained history has seq ${want.seq} next.`,
        `every retained event with seq > ${cursor}, in order, none skipped`,
        shown,
      );
    }
  }

  /** Acts until the history holds maxEvents (plus `extra`), following the completions as they come. */
  private async fillHistory(slot: Slot, extra: number): Promise<void> {
    await this.authorized(0); // completions are followed on the first connection
    const status = await this.status(slot);
    if (!status) return;
    let need = status.maxEvents - status.events + extra;
    if (!this.pace.affords(need, "fill-history")) {
      this.cov.cannot(["history.exactly-max", "history.evicting", "cursor.before-oldest"], this.pace.reason(need));
      return;
    }
    const batchMax = Math.max(1, Math.min(status.maxQueuedCommands, status.maxEvents));
    while (need > 0) {
      const batch = new Set<number>();
      while (batch.size < Math.min(batchMax, need)) {
        const until = Date.now() + this.ctx.timeoutMs * 2;
        const pause = new Backoff();
        let outcome = await this.act(slot, { type: FILL_TYPE });
        while (outcome === "full" && Date.now() < until) {
          await pause.wait(until);
          outcome = await this.act(slot, { type: FILL_TYPE });
        }
        if (outcome !== "accepted") return;
        batch.add(this.commandSeq);
      }
      need -= batch.size;
      await this.status(slot);
      const until = Date.now() + this.ctx.timeoutMs * 2;
      const pause = new Backoff();
      const unseen = this.unseen;
      while (!(await this.settled(batch, unseen)) && Date.now() < until) {
        if (!(await this.follow())) await pause.wait(until);
      }
    }
    await this.status(slot);
  }

  private async auth(slot: Slot, right: boolean, times: number): Promise<void> {
    if (!this.ctx.tokenConfigured) return;
    const s = this.slots[slot]!;
    for (let i = 0; i < times; i++) {
      if (right && s.failures >= AUTH_FAILURES) this.cov.reach("auth.authorized-after-failures");
      if (!right && s.auth === true) this.cov.reach("auth.failure-after-authorized");
      const reply = await this.call(slot, "auth", { token: right ? this.ctx.token() : `wrong-${i}-${s.failures}` });
      const authorized = resultOf(reply)?.authorized;
      check(
        authorized === right,
        "method.auth",
        `auth with the ${right ? "right" : "wrong"} token${right && s.failures ? ` after ${s.failures} wrong one(s)` : ""} answered ${JSON.stringify(authorized)}.`,
        `{"authorized":${right}}`,
        describeReply(reply),
      );
      if (right) Object.assign(s, { auth: true, failures: 0, authorizedOnce: true });
      else {
        s.failures++;
        // Whether a wrong token revokes an authorization already granted, the contract does not say.
        s.auth = s.auth === true ? undefined : false;
      }
    }
  }

  private async reconnect(slot: Slot, authorize: boolean): Promise<void> {
    await this.openSlot(slot, authorize);
    await this.ping(slot, undefined, false);
    this.cov.reach("conn.reconnect");
  }

  /** Opens and closes connections in a row, each authorized and pinged: a per-connection leak shows as one unserved. */
  private async churn(count: number): Promise<void> {
    for (const s of this.slots) s.conn?.close();
    for (let i = 1; i <= count; i++) {
      const conn = await this.ctx.connect();
      const served = (reply: Reply, what: string) =>
        check(
          reply.kind === "response" && !reply.response.error,
          "wire.sequential-connection",
          `Connection ${i} of ${count} opened and closed in a row: ${what} was not served.`,
          "every new connection served like the first",
          describeReply(reply),
        );
      if (this.ctx.tokenConfigured) served(await this.ctx.call(conn, this.ctx.authRequest(`churn-auth-${i}`)), "auth");
      else served(await this.ctx.call(conn, rpc("ping", {}, `churn-${i}`)), "ping");
      conn.close();
    }
    this.cov.reach("conn.churn");
    await this.openSlot(0, true);
    if (this.two) await this.openSlot(1, true);
  }

  /** A ping, then our FIN: the reply or a close are both allowed; a new connection must then be served. */
  private async halfClose(slot: Slot): Promise<void> {
    const conn = this.conn(slot);
    const id = `half-close-${++this.nextId}`;
    const sent = conn.write(`${JSON.stringify(rpc("ping", {}, id))}\n`);
    if (typeof sent !== "boolean") await sent;
    conn.endWrites();
    const reply = await this.ctx.read(conn, { expectId: id });
    if (reply.kind === "response" && this.slots[slot]!.auth === true)
      check(
        resultOf(reply)?.ok === true,
        "method.ping",
        "A ping before a half-close was not answered {ok:true}.",
        `{"ok":true} or a close`,
        describeReply(reply),
      );
    this.cov.reach("conn.half-closed");
    await this.openSlot(slot, true);
  }

  /** Part of a line, then a close: the next connection must start clean. */
  private async partialClose(slot: Slot, text: string): Promise<void> {
    const conn = this.conn(slot);
    const sent = conn.write(text);
    if (typeof sent !== "boolean") await sent;
    conn.close();
    await this.openSlot(slot, true, "wire.ndjson");
    const reply = await this.call(slot, "ping", {});
    check(
      resultOf(reply)?.ok === true,
      "wire.ndjson",
      "After a connection closed with part of a line unsent, a ping on a new connection was not answered {ok:true}.",
      `{"ok":true}: each connection is its own stream of lines`,
      describeReply(reply),
    );
    this.cov.reach("conn.partial-line-at-close");
  }

  private async ping(slot: Slot, id: unknown, repeat: boolean): Promise<void> {
    const s = this.slots[slot]!;
    const again = repeat && s.served > 0;
    const chosen = again ? s.lastId : id;
    const reply = await this.call(slot, "ping", {}, id === undefined && !again ? {} : { id: chosen, hasId: true });
    if (again) this.cov.reach("id.repeated");
    if (id !== undefined || again) this.cov.reach(idCell(chosen));
    if (s.auth === true)
      check(
        resultOf(reply)?.ok === true,
        "method.ping",
        `ping${again ? " repeating the id of the request before it" : ""} was not answered {ok:true}.`,
        `{"ok":true}`,
        describeReply(reply),
      );
  }

  /**
   * A ping whose string id holds a multibyte character split across a read boundary: at `kib` KiB into the line
   * (the line then longer than that), or, with kib 0, just after the start. The line is written in two segments
   * cut inside the character; the id must come back as sent.
   */
  private async boundaryLine(slot: Slot, kib: number, char: string): Promise<void> {
    const at = kib ? kib * 1024 : ID_OFFSET + 8;
    const id = `${"a".repeat(at - 1 - ID_OFFSET)}${char}${"z".repeat(8)}`;
    const s = this.slots[slot]!;
    const reply = await this.ctx.call(this.conn(slot), rpc("ping", {}, id), {
      splitAt: [at],
      delayMs: 2,
      anyId: true,
    });
    s.lastId = id;
    s.served++;
    this.cov.reach("read.split-character");
    if (kib) this.cov.reach(`read.line-${kib}k`);
    const echoed = reply.kind === "response" ? reply.response.id : undefined;
    if (echoed !== id) {
      const where = kib ? `its ${kib} KiB boundary` : "two segments";
      const differs = typeof echoed === "string" ? [...echoed].findIndex((c, i) => c !== id[i]) : -1;
      throw violation(
        "wire.utf8",
        `A ${Buffer.byteLength(id) + ID_OFFSET} byte line with ${JSON.stringify(char)} across ${where} did not come back with its id intact.`,
        `the id echoed as sent (a ${Buffer.byteLength(char)}-byte character at byte ${at - 1} of the line)`,
        typeof echoed === "string"
          ? `the id differs from character ${differs}: ${JSON.stringify(echoed.slice(Math.max(0, differs - 4), differs + 4))}`
          : describeReply(reply),
      );
    }
    this.judgeAuthorization(slot, "ping", reply);
  }

  /** Acts on two or three connections at once: every accepted one gets its own, higher commandSeq. */
  private async raceActs(count: number): Promise<void> {
    await this.authorized(0);
    await this.authorized(1);
    const extra = count > 2 ? await this.ctx.connect({ alongside: true }) : undefined;
    if (extra && this.ctx.tokenConfigured) await this.ctx.call(extra, this.ctx.authRequest("race-auth"));
    const conns = [this.conn(0), this.conn(1), ...(extra ? [extra] : [])];
    const type = this.types[0] ?? FILL_TYPE;
    const replies = await Promise.all(conns.map((c, i) => this.ctx.call(c, rpc("act", { type }, `race-${i}`))));
    extra?.close();
    const before = this.commandSeq;
    const seqs: number[] = [];
    for (const reply of replies) {
      if (errorCode(reply) === this.ctx.contract.codes["error.queue-full"]) continue;
      const seq = resultOf(reply)?.commandSeq;
      check(
        resultOf(reply)?.accepted === true && Number.isSafeInteger(seq),
        "method.act",
        "An act sent at the same time as another on a second connection was not accepted.",
        `{"accepted":true,"commandSeq":<integer>} or ${this.ctx.contract.codes["error.queue-full"]}`,
        describeReply(reply),
      );
      seqs.push(seq as number);
    }
    const shown = `commandSeq ${seqs.join(", ")} (the last before: ${before})`;
    check(
      new Set(seqs).size === seqs.length,
      "method.act",
      `Acts on ${conns.length} connections at once got the same commandSeq.`,
      "a distinct commandSeq per accepted command",
      shown,
    );
    check(
      seqs.every((s) => s > before),
      "method.act",
      "An act on a second connection got a commandSeq not above the last one.",
      "commandSeq increasing",
      shown,
    );
    this.pace.spent += seqs.length;
    for (const seq of seqs) {
      this.accepted.set(seq, { type });
      this.commandSeq = Math.max(this.commandSeq, seq);
    }
    this.justRejected = false;
    if (seqs.length > 1) this.cov.reach("race.acts");
  }

  /** An act, then observe on the second connection while the first follows the command to its completion. */
  private async raceObserve(): Promise<void> {
    await this.authorized(0);
    await this.authorized(1);
    if ((await this.act(0, { type: this.types[0] ?? FILL_TYPE })) !== "accepted") return;
    const seq = this.commandSeq;
    const until = Date.now() + this.ctx.timeoutMs * 2;
    const unseen = this.unseen;
    let observed = 0;
    while (!(await this.settled([seq], unseen)) && Date.now() < until) {
      await Promise.all([this.observe(1), this.follow()]);
      observed++;
    }
    if (this.completions.has(seq) && observed) this.cov.reach("race.observe-completion");
  }

  /** Queues a few commands, then reads status on the second connection while the first follows them draining. */
  private async raceStatus(): Promise<void> {
    await this.authorized(0);
    await this.authorized(1);
    const max = this.limits?.maxQueuedCommands ?? 1;
    for (let i = 0; i < Math.min(max, 8); i++) if ((await this.act(0, { type: FILL_TYPE })) !== "accepted") break;
    const until = Date.now() + this.ctx.timeoutMs * 2;
    let last: number | undefined;
    let drained = false;
    while (Date.now() < until) {
      const [status] = await Promise.all([this.status(1), this.follow()]);
      if (!status) return;
      check(
        last === undefined || status.queuedCommands <= last,
        "method.status",
        `queuedCommands rose from ${last} to ${status.queuedCommands} while the queue drained and nothing was acted.`,
        "queuedCommands never rises without an act",
        JSON.stringify(status),
      );
      if (last !== undefined && status.queuedCommands < last) drained = true;
      last = status.queuedCommands;
      if (last === 0) break;
    }
    if (drained) this.cov.reach("race.status-draining");
  }

  // ---- completions ----

  /** Reads the completions that arrived since the last look (one page, on the first connection); whether any came. */
  private async follow(): Promise<boolean> {
    const s = this.slots[0];
    if (!this.accepted.size || s?.auth !== true || s.conn?.closed !== false) return false;
    if ([...this.accepted.keys()].every((k) => this.completions.has(k))) return false;
    const page = await this.eventsCall(0, this.followCursor, this.ctx.contract.limits.eventsLimitMax);
    if (!page) return false;
    this.record(page.events);
    return page.events.length > 0;
  }

  /**
   * Whether the follower has read the completion of every command in `seqs`; or, once events fell into gaps
   * (a small history dropped them unread, `unseenBefore` counts those before) and the queue is empty, whether
   * nothing more is to come.
   */
  private async settled(seqs: Iterable<number>, unseenBefore: number): Promise<boolean> {
    if ([...seqs].every((s) => this.completions.has(s))) return true;
    if (this.unseen === unseenBefore) return false;
    const status = await this.status(0);
    return status !== undefined && status.queuedCommands === 0 && !(await this.follow());
  }

  private record(events: EventsResult["events"]): void {
    if (events.length && events[0]!.seq > this.followCursor + 1) this.unseen += events[0]!.seq - this.followCursor - 1;
    for (const { seq, event } of events) {
      this.followCursor = seq;
      if (event.type !== "command_completed") continue;
      const key = Number(event.commandSeq);
      const list = this.completions.get(key) ?? [];
      list.push({ seq, commandSeq: event.commandSeq, success: event.success, message: event.message, event });
      this.completions.set(key, list);
    }
  }

  /**
   * Reads the whole retained history from its start: a completion of `missing` found there at a seq a reader
   * following with a cursor has passed (at or below `passed`) was skipped by events after that cursor.
   */
  private async skippedOver(conn: Connection, missing: ReadonlySet<number>, passed: number): Promise<void> {
    const max = this.ctx.contract.limits.eventsLimitMax;
    let cursor = 0;
    for (let pages = 0; pages < 64; pages++) {
      const { events, latestSeq } = await readEvents(this.ctx, conn, cursor, max, `window-${++this.nextId}`);
      const found = events.find(
        (e) => e.event.type === "command_completed" && missing.has(Number(e.event.commandSeq)) && e.seq <= passed,
      );
      if (found)
        throw violation(
          "method.events",
          `The completion of commandSeq ${found.event.commandSeq} is retained (seq ${found.seq}), but following the events after a cursor before it never returned it.`,
          "every retained event with seq > afterSeq is returned, none skipped",
          JSON.stringify(found),
        );
      if (!events.length || events.at(-1)!.seq >= latestSeq) break;
      cursor = events.at(-1)!.seq;
    }
  }

  /** Waits for every accepted command's completion; the first that is missing, repeated or malformed fails. */
  async finish(): Promise<Finding | undefined> {
    for (const s of this.slots) s.conn?.close();
    if (!this.accepted.size) return undefined;
    // A completion already read twice, or malformed, fails without waiting for the rest.
    for (const [seq, command] of this.accepted) {
      const list = this.completions.get(seq);
      const broken = list && judgeCompletion(list, seq, command, ["integration.command-completion"]);
      if (broken) return broken;
    }
    const waiting = new Set([...this.accepted.keys()].filter((k) => !this.completions.has(k)));
    if (!waiting.size) return undefined;
    const watcher = await this.ctx.session();
    // A completion the follower read past without getting it is a fault of events, not of completion.
    await this.skippedOver(watcher, waiting, this.followCursor);
    // Those the follower may have lost to a small history, with the queue empty, are not waited for.
    const queued = resultOf(await this.ctx.call(watcher, rpc("status", {}, `finish-${++this.nextId}`)))?.queuedCommands;
    const gone = waiting.size <= this.unseen && queued === 0;
    const done = gone
      ? undefined
      : await collectCompletions(this.ctx, watcher, this.followCursor, waiting, { unseenBefore: this.unseen });
    for (const [key, list] of done ?? []) {
      if (list.every((c) => c.evicted)) continue;
      this.completions.set(key, [...(this.completions.get(key) ?? []), ...list]);
    }
    const absent = new Set([...waiting].filter((k) => !this.completions.has(k)));
    // The collector followed the events from the follower's cursor and gave up on these: one retained now was
    // never returned to it (or completed just as it gave up, after twice the reply timeout without a completion:
    // a failure either way).
    if (absent.size && done) await this.skippedOver(watcher, absent, Number.POSITIVE_INFINITY);
    const missing = [...waiting].filter((k) => !this.completions.has(k));
    // Completions a small history dropped before they could be read are not held against the bridge.
    const unobservable = missing.length <= (done ? done.unseen : this.unseen);
    for (const [seq, command] of this.accepted) {
      if (unobservable && missing.includes(seq)) continue;
      const broken = judgeCompletion(this.completions.get(seq), seq, command, ["integration.command-completion"]);
      if (broken) return broken;
    }
    return undefined;
  }
}

/** How a step reads in a counterexample: what it does, without a 2000-character field. */
export function describeStep(step: Step): string {
  const { kind, ...rest } = step;
  if (kind === "act" && JSON.stringify(step.command).length > 160)
    return `act(${JSON.stringify(step.command).slice(0, 120)}…, conn ${step.slot})`;
  return `${kind}(${JSON.stringify(rest)})`;
}
