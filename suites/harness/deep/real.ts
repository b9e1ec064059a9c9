// The real side of a deep session: the connections to the bridge and the calls every step makes, each judged by the
// shared judges and against the model (deep/model.ts), which it keeps up to date from what the bridge said.

import type { Command } from "../../../generators/command.js";
import type { Slot } from "../../../generators/sessionStep.js";
import type { RuleId } from "../../../protocol/contract.js";
import { AUTH_FAILURES, type Coverage, historyCell, idCell, queueCells } from "../cells.js";
import { type CheckContext, describeReply, errorCode, type Reply, resultOf, rpc, violation } from "../check.js";
import type { Connection } from "../connection.js";
import { type EventsResult, judgeEvents } from "../events.js";
import type { DeepModel, Status } from "./model.js";
import type { LoopAllowance } from "./pace.js";

/** The command type fills use: unknown to every bridge, so it completes (as a failure) without side effects. */
export const FILL_TYPE = "conformance.fill";

/** The cell an act with extreme values of a field kind reaches (booleans have no extremes beyond their two values). */
const EXTREME_CELL: Record<string, string> = {
  integer: "command.extreme-integers",
  identifier: "command.extreme-identifiers",
  string: "command.extreme-strings",
};

/** Throws a violation of `rule` unless `ok`. */
export const check = (ok: boolean, rule: RuleId, message: string, expected: string, actual: string): void => {
  if (!ok) throw violation(rule, message, expected, actual);
};

export class DeepReal {
  /** The open connection of each slot of the model. */
  readonly conns: (Connection | undefined)[] = [];

  constructor(
    readonly ctx: CheckContext,
    readonly cov: Coverage,
    readonly pace: LoopAllowance,
    readonly m: DeepModel,
  ) {}

  async openSlot(slot: Slot, authorize: boolean, rule: RuleId = "validation.protocol-smoke"): Promise<void> {
    this.conns[slot]?.close();
    const conn = await this.ctx.connect(this.m.two ? { alongside: true } : {});
    this.conns[slot] = conn;
    const state = this.m.opened(slot);
    if (authorize && this.ctx.tokenConfigured) {
      const reply = await this.ctx.call(conn, this.ctx.authRequest(this.m.id("deep-auth")));
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

  conn(slot: Slot): Connection {
    return this.conns[slot]!;
  }

  /** Opens a session's connections (authorized) and reads where the bridge stands. */
  static async open(ctx: CheckContext, cov: Coverage, pace: LoopAllowance, m: DeepModel): Promise<DeepReal> {
    const real = new DeepReal(ctx, cov, pace, m);
    await real.openSlot(0, true);
    if (m.two) await real.openSlot(1, true);
    const status = await real.status(0);
    if (status && status.events < status.maxEvents) m.life.evicted = false;
    if (status?.maxEvents === 1)
      cov.cannot(["history.below-max", "cursor.inside"], "the history holds a single event (maxEvents 1)");
    m.followCursor = (await real.eventsCall(0, 0, 1))?.latestSeq ?? 0;
    return real;
  }

  /** Closes every connection of the session. */
  closeAll(): void {
    for (const conn of this.conns) conn?.close();
  }

  /** One request on a slot, judged by the harness (envelope, id echo) and against the slot's authorization. */
  async call(
    slot: Slot,
    method: string,
    params: Record<string, unknown>,
    o: { id?: unknown; hasId?: boolean } = {},
  ): Promise<Reply> {
    const s = this.m.slots[slot]!;
    const id = o.hasId ? o.id : this.m.id("deep");
    if (method !== "auth") {
      if (s.auth === false && s.failures === 0 && !s.authorizedOnce) this.cov.reach("auth.none");
      if (s.failures >= 1) this.cov.reach("auth.after-one-failure");
      if (s.failures >= AUTH_FAILURES) this.cov.reach("auth.after-failures");
    }
    const reply = await this.ctx.call(this.conn(slot), rpc(method, params, id));
    s.lastId = id;
    if (++s.served >= 3) this.cov.reach("conn.one");
    if (this.m.lastSlot !== undefined && this.m.lastSlot !== slot && this.conns[this.m.lastSlot]?.closed === false)
      this.cov.reach("conn.two-interleaved");
    this.m.lastSlot = slot;
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

  judgeAuthorization(slot: Slot, method: string, reply: Reply): void {
    const s = this.m.slots[slot]!;
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
  async authorized(slot: Slot): Promise<void> {
    if (this.m.slots[slot]!.auth !== true) await this.auth(slot, true, 1);
  }

  async auth(slot: Slot, right: boolean, times: number): Promise<void> {
    if (!this.ctx.tokenConfigured) return;
    const s = this.m.slots[slot]!;
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

  /** act; what became of it. A full queue and (for extreme values) invalid params are outcomes, not faults. */
  async act(slot: Slot, command: Command, extreme?: string[]): Promise<"accepted" | "full" | "refused"> {
    const reply = await this.call(slot, "act", command);
    if (this.m.slots[slot]!.auth === false) return "refused";
    const { codes } = this.ctx.contract;
    if (this.m.justRejected) this.cov.reach("queue.after-rejection");
    if (errorCode(reply) === codes["error.queue-full"]) {
      this.cov.reach("queue.full");
      this.m.justRejected = true;
      return "full";
    }
    this.m.justRejected = false;
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
      (seq as number) > this.m.commandSeq,
      "method.act",
      `commandSeq went from ${this.m.commandSeq} to ${seq}.`,
      "commandSeq increasing",
      describeReply(reply),
    );
    this.m.commandSeq = seq as number;
    this.m.accepted.set(seq as number, command);
    this.pace.spent++;
    this.noteActed(command);
    return "accepted";
  }

  noteActed(command: Command): void {
    if (!this.m.types.includes(command.type)) this.cov.reach("command.unknown-type");
    else this.m.life.typesActed.add(command.type);
    if (this.m.types.length && this.m.types.every((t) => this.m.life.typesActed.has(t)))
      this.cov.reach("command.every-advertised-type");
    if (command.append === true && this.m.lastAppend) this.cov.reach("command.consecutive-appends");
    this.m.lastAppend = command.append === true;
  }

  /** status, judged: occupancy within the limits it advertises, limits that hold still, observationSeq never back. */
  async status(slot: Slot): Promise<Status | undefined> {
    const reply = await this.call(slot, "status", {});
    if (this.m.slots[slot]!.auth === false) return undefined;
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
    this.m.limits ??= { maxQueuedCommands: st.maxQueuedCommands, maxEvents: st.maxEvents };
    check(
      st.maxQueuedCommands === this.m.limits.maxQueuedCommands && st.maxEvents === this.m.limits.maxEvents,
      "method.status",
      "status changed the limits it advertises in the middle of a session.",
      JSON.stringify(this.m.limits),
      shown,
    );
    this.advanceObservation(st.observationSeq, "method.status", shown);
    for (const cell of queueCells(st.queuedCommands, st.maxQueuedCommands)) this.cov.reach(cell);
    if (st.events === st.maxEvents && this.m.life.evicted !== true) {
      // Full: exactly, where it was seen below maxEvents and nothing came since it filled (note latestSeq), or
      // evicting once events came after it was first seen full (whether or not it was seen filling up).
      const latest = (await this.eventsCall(slot, 0, 1))?.latestSeq;
      if (latest !== undefined && this.m.life.fullAt === undefined) this.m.life.fullAt = latest;
      else if (latest !== undefined && latest > this.m.life.fullAt!) this.m.life.evicted = true;
    }
    const cell = historyCell(st.events, st.maxEvents, this.m.life.evicted);
    if (cell) this.cov.reach(cell);
    return st;
  }

  advanceObservation(seq: unknown, rule: RuleId, shown: string): void {
    check(
      Number.isSafeInteger(seq) && (seq as number) >= this.m.observationSeq,
      rule,
      `observationSeq ${seq} is below one seen before (${this.m.observationSeq}).`,
      "observationSeq never decreases",
      shown,
    );
    this.m.observationSeq = seq as number;
  }

  async observe(slot: Slot): Promise<void> {
    const reply = await this.call(slot, "observe", {});
    if (this.m.slots[slot]!.auth === false) return;
    const r = resultOf(reply);
    this.advanceObservation(r?.observationSeq, "method.observe", describeReply(reply));
  }

  async eventsCall(slot: Slot, afterSeq: number, limit: number): Promise<EventsResult | undefined> {
    const reply = await this.call(slot, "events", { afterSeq, limit });
    if (this.m.slots[slot]!.auth === false) return undefined;
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

  async ping(slot: Slot, id: unknown, repeat: boolean): Promise<void> {
    const s = this.m.slots[slot]!;
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

  /** Reads the completions that arrived since the last look (one page, on the first connection); whether any came. */
  async follow(): Promise<boolean> {
    if (!this.m.accepted.size || this.m.slots[0]?.auth !== true || this.conns[0]?.closed !== false) return false;
    if (this.m.allCompleted) return false;
    const page = await this.eventsCall(0, this.m.followCursor, this.ctx.contract.limits.eventsLimitMax);
    if (!page) return false;
    this.m.record(page.events);
    return page.events.length > 0;
  }

  /**
   * Whether the follower has read the completion of every command in `seqs`; or, once events fell into gaps
   * (a small history dropped them unread, `unseenBefore` counts those before) and the queue is empty, whether
   * nothing more is to come.
   */
  async settled(seqs: Iterable<number>, unseenBefore: number): Promise<boolean> {
    if ([...seqs].every((s) => this.m.completions.has(s))) return true;
    if (this.m.unseen === unseenBefore) return false;
    const status = await this.status(0);
    return status !== undefined && status.queuedCommands === 0 && !(await this.follow());
  }
}
