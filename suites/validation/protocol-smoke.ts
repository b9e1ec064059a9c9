import fc from "fast-check";
import { nonStandardJson } from "../../generators/nonStandardJson.js";
import { type RuleId, contract as shipped } from "../../protocol/contract.js";
import type { Oracle } from "../../protocol/verdict.js";
import {
  type CallOptions,
  type Check,
  type CheckContext,
  describeReply,
  errorCode,
  Fault,
  fail,
  pass,
  type Reply,
  resultOf,
  rpc,
  violation,
} from "../harness/check.js";
import type { Connection } from "../harness/connection.js";
import { collectCompletions, judgeEvents, latestSeq } from "../harness/events.js";
import { ACCEPTED, judgedBy, seqAbove } from "../harness/expect.js";
import { advertisedTypes } from "../harness/lifecycle.js";
import { seqRepeated, UNSERVED_CONNECTION } from "../harness/plain.js";

/** What the session should look like from the client's side. `authorized` undefined: not known (after garbage). */
interface Model {
  open: boolean;
  token: boolean;
  authorized: boolean | undefined;
  observationSeq: number;
  commandSeq: number;
  cursor: number;
}
interface Real {
  ctx: CheckContext;
  conn?: Connection;
  accepted: Set<number>;
  cursor0: number;
  /** The id of the last request sent through authorizedCall. */
  last?: number;
  /** The ids of the replies that gave the observationSeq and the commandSeq last seen. */
  observedAt?: number;
  /** The method that gave the observationSeq last seen. */
  observedBy?: "status" | "observe";
  actedAt?: number;
  step: number;
  /** Whether the connection has answered a request since it opened. */
  served: boolean;
}

type SessionCommand = fc.AsyncCommand<Model, Real>;

function check(
  ok: boolean,
  rule: RuleId,
  message: string,
  expected: string,
  reply: Reply | string,
  oracle?: Oracle,
): asserts ok {
  if (!ok) throw violation(rule, message, expected, typeof reply === "string" ? reply : describeReply(reply), oracle);
}

const UNAUTHORIZED: Oracle = { kind: "error", codes: [shipped.codes["error.unauthorized"]!] };

/** A request on the session's connection; a reply marks the connection served. */
async function send(real: Real, request: object | string, options?: CallOptions): Promise<Reply> {
  const reply = await real.ctx.call(real.conn!, request, options);
  if (reply.kind === "response") real.served = true;
  return reply;
}

/**
 * A request left unanswered on a connection that has answered nothing yet: auth on the same connection tells a
 * connection never served (the root cause, which the harness attributes as for every check) from one request dropped.
 */
async function servedOrThrow(real: Real, method: string, reply: Reply): Promise<void> {
  if (reply.kind === "response" || reply.kind === "closed" || reply.kind === "reset" || real.served) return;
  const auth = await send(real, real.ctx.authRequest(++real.step));
  check(
    auth.kind === "response",
    UNSERVED_CONNECTION,
    `Neither ${method} nor auth on a new connection was answered.`,
    "a reply",
    auth,
  );
}

/** Calls a method that needs authorization; returns the result when served, checks the unauthorized error when not. */
async function authorizedCall(
  model: Model,
  real: Real,
  method: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  const reply = await send(real, rpc(method, params, ++real.step));
  real.last = real.step;
  await servedOrThrow(real, method, reply);
  const code = real.ctx.contract.codes["error.unauthorized"];
  const unauthorized = errorCode(reply) === code;
  if (model.authorized === undefined) model.authorized = !unauthorized;
  if (!model.authorized) {
    check(
      unauthorized,
      "error.unauthorized",
      `${method} on an unauthorized connection was not rejected with ${code}.`,
      String(code),
      reply,
      UNAUTHORIZED,
    );
    return undefined;
  }
  // Authorization lost on a connection that was granted it, by calls that do not touch it: only a session shows it.
  check(
    !unauthorized,
    "validation.protocol-smoke",
    `${method} on an authorized connection got ${code}.`,
    "served",
    reply,
    { kind: "result" },
  );
  return resultOf(reply) ?? {};
}

const isOpen = (m: Readonly<Model>) => m.open;

/** The methods that report observationSeq, each with its rule. */
const OBSERVING = { status: "method.status", observe: "method.observe" } as const;
type Observing = keyof typeof OBSERVING;

/**
 * status and observe both report observationSeq, which never goes back. Below a seq the other method gave, the
 * other is asked again: where it goes back too, its seq is the one out of step (it counts down), else this one lags.
 */
async function advanceObservation(model: Model, real: Real, result: Record<string, unknown>, method: Observing) {
  let seq = result.observationSeq;
  let rule: RuleId = OBSERVING[method];
  let shown = result;
  const other = real.observedBy;
  let judged = real.last;
  const below = (n: unknown) => !Number.isSafeInteger(n) || (n as number) < model.observationSeq;
  if (below(seq) && Number.isSafeInteger(seq) && other && other !== method) {
    const again = await authorizedCall(model, real, other, {});
    if (again && below(again.observationSeq))
      [seq, rule, shown, judged] = [again.observationSeq, OBSERVING[other], again, real.last];
  }
  const at = ["result", "observationSeq"];
  check(
    !below(seq),
    rule,
    `observationSeq ${seq} is below one seen before (${model.observationSeq}).`,
    "observationSeq never decreases",
    JSON.stringify(shown).slice(0, 300),
    {
      kind: "result",
      at: judged,
      expect: [
        { path: at, is: "integer" },
        ...(real.observedAt === undefined
          ? []
          : [{ path: at, op: ">=" as const, than: { ref: real.observedAt, path: at } }]),
      ],
    },
  );
  model.observationSeq = seq as number;
  real.observedAt = real.last;
  real.observedBy = method;
}

/**
 * Where a session's commands were not found completing: latestSeq read on one connection after an event there, then on
 * the next. Lower on the next, events are numbered per connection (method.events), and a cursor from one connection
 * cannot find completions on another.
 */
async function seqsAcrossConnections(ctx: CheckContext, conn: Connection): Promise<void> {
  const before = await latestSeq(ctx, conn);
  const seq = resultOf(await ctx.call(conn, rpc("act", { type: "conformance.noop" }, "probe")))?.commandSeq;
  if (Number.isSafeInteger(seq)) await collectCompletions(ctx, conn, before, new Set([seq as number]));
  const here = await latestSeq(ctx, conn);
  const next = await latestSeq(ctx, await ctx.session());
  check(
    next >= here,
    "method.events",
    `latestSeq is ${here} on one connection and then ${next} on the next: events are not numbered across ` +
      "connections, so a cursor from one cannot find completions on another.",
    `latestSeq >= ${here} on the next connection`,
    `latestSeq ${next}`,
  );
}

class Reconnect implements SessionCommand {
  check = () => true;
  async run(model: Model, real: Real) {
    real.conn?.close();
    real.conn = await real.ctx.connect();
    real.served = false;
    Object.assign(model, { open: true, authorized: !model.token });
  }
  toString = () => "reconnect";
}

class Auth implements SessionCommand {
  constructor(
    readonly right: boolean,
    readonly wrongToken: string,
  ) {}
  // A wrong token is only tried on an unauthorized connection: whether it revokes a granted authorization is not specified.
  check = (m: Readonly<Model>) => m.open && m.token && (this.right || m.authorized === false);
  async run(model: Model, real: Real) {
    const reply = await send(
      real,
      this.right ? real.ctx.authRequest(++real.step) : rpc("auth", { token: this.wrongToken }, ++real.step),
    );
    await servedOrThrow(real, "auth", reply);
    const authorized = resultOf(reply)?.authorized;
    check(
      authorized === this.right,
      "method.auth",
      `auth with the ${this.right ? "right" : "wrong"} token answered ${JSON.stringify(authorized)}.`,
      `{"authorized":${this.right}}`,
      reply,
      { kind: "result", equals: { authorized: this.right } },
    );
    model.authorized = this.right;
  }
  toString = () => (this.right ? "auth(right)" : `auth(wrong: ${JSON.stringify(this.wrongToken)})`);
}

class Ping implements SessionCommand {
  check = isOpen;
  async run(model: Model, real: Real) {
    const r = await authorizedCall(model, real, "ping", {});
    if (r)
      check(r.ok === true, "method.ping", "ping was not answered {ok:true}.", `{"ok":true}`, JSON.stringify(r), {
        kind: "result",
        equals: { ok: true },
      });
  }
  toString = () => "ping";
}

class Status implements SessionCommand {
  check = isOpen;
  async run(model: Model, real: Real) {
    const r = await authorizedCall(model, real, "status", {});
    if (!r) return;
    check(
      Number.isSafeInteger(r.queuedCommands) &&
        Number.isSafeInteger(r.maxQueuedCommands) &&
        (r.queuedCommands as number) <= (r.maxQueuedCommands as number),
      "integration.bounded-state",
      "status occupancy is missing or over its limit.",
      "queuedCommands <= maxQueuedCommands",
      JSON.stringify(r),
      {
        kind: "result",
        expect: [
          { path: ["result", "queuedCommands"], is: "integer" },
          { path: ["result", "maxQueuedCommands"], is: "integer" },
          { path: ["result", "queuedCommands"], op: "<=", than: { here: ["result", "maxQueuedCommands"] } },
        ],
      },
    );
    await advanceObservation(model, real, r, "status");
  }
  toString = () => "status";
}

class Observe implements SessionCommand {
  check = isOpen;
  async run(model: Model, real: Real) {
    const r = await authorizedCall(model, real, "observe", {});
    if (!r) return;
    await advanceObservation(model, real, r, "observe");
  }
  toString = () => "observe";
}

class Events implements SessionCommand {
  constructor(
    readonly fromCursor: boolean,
    readonly limit: number,
  ) {}
  check = isOpen;
  async run(model: Model, real: Real) {
    const afterSeq = this.fromCursor ? model.cursor : 0;
    const r = await authorizedCall(model, real, "events", { afterSeq, limit: this.limit });
    if (!r) return;
    const { events, latestSeq: latest } = judgeEvents(r, afterSeq, JSON.stringify(r).slice(0, 300));
    const { eventsLimitMin: min, eventsLimitMax: max } = real.ctx.contract.limits;
    check(
      events.length <= Math.min(Math.max(this.limit, min), max),
      "method.events",
      `limit ${this.limit} returned ${events.length} events.`,
      `limit clamped to ${min}..${max}`,
      `${events.length} events`,
      {
        kind: "result",
        expect: [
          { path: ["result", "events", "#"], op: "<=", than: { value: Math.min(Math.max(this.limit, min), max) } },
        ],
      },
    );
    model.cursor = Math.max(model.cursor, latest);
  }
  toString = () => `events(${this.fromCursor ? "after cursor" : "from 0"}, limit ${this.limit})`;
}

class Act implements SessionCommand {
  constructor(readonly type: string) {}
  check = isOpen;
  async run(model: Model, real: Real) {
    const reply = await send(real, rpc("act", { type: this.type }, ++real.step));
    await servedOrThrow(real, "act", reply);
    const { codes } = real.ctx.contract;
    if (errorCode(reply) === codes["error.queue-full"]) return;
    const unauthorized = errorCode(reply) === codes["error.unauthorized"];
    if (model.authorized === undefined) model.authorized = !unauthorized;
    if (!model.authorized)
      return check(
        unauthorized,
        "error.unauthorized",
        `act on an unauthorized connection was not rejected with ${codes["error.unauthorized"]}.`,
        String(codes["error.unauthorized"]),
        reply,
        UNAUTHORIZED,
      );
    const r = resultOf(reply);
    check(
      r?.accepted === true && Number.isSafeInteger(r.commandSeq),
      "method.act",
      `act ${this.type} was not accepted.`,
      `{"accepted":true,"commandSeq":<integer>}`,
      reply,
      { kind: "result", expect: ACCEPTED },
    );
    check(
      (r!.commandSeq as number) > model.commandSeq,
      "method.act",
      `commandSeq went from ${model.commandSeq} to ${r!.commandSeq}.`,
      "commandSeq increasing",
      reply,
      { kind: "result", expect: real.actedAt === undefined ? [] : [seqAbove(real.actedAt)] },
    );
    model.commandSeq = r!.commandSeq as number;
    real.actedAt = real.step;
    real.accepted.add(model.commandSeq);
  }
  toString = () => `act(${JSON.stringify(this.type)})`;
}

class Garbage implements SessionCommand {
  constructor(readonly text: string) {}
  check = isOpen;
  async run(model: Model, real: Real) {
    const reply = await send(real, this.text, { expectId: 1, orNullId: true });
    await servedOrThrow(real, "a malformed line", reply);
    if (reply.kind === "closed" || reply.kind === "reset") {
      model.open = false;
      return;
    }
    const code = real.ctx.contract.codes["error.parse"];
    check(
      errorCode(reply) === code,
      "error.parse",
      `A malformed line mid-session was not rejected with ${code}.`,
      `${code} or a close`,
      reply,
      { kind: "error", codes: [code!], orClose: true },
    );
    model.authorized = undefined; // whether a parse error keeps authorization is not specified
  }
  toString = () => `garbage(${JSON.stringify(this.text)})`;
}

export const statefulSession: Check = {
  id: "validation.protocol-smoke/stateful",
  rules: ["validation.protocol-smoke"],
  needs: ["completions"],
  description:
    "Runs random sessions of auth (right and wrong), ping, status, observe, events with cursors, act, reconnects and malformed lines, checking each reply against a model of the session; then waits for every accepted command to complete.",
  async run(ctx) {
    // Commands reach the bridge's own handlers where it advertises them, and an unknown type besides.
    const types = await advertisedTypes(ctx, await ctx.session());
    const commands = [
      fc.constant(new Reconnect()),
      fc.boolean().chain((right) => fc.string({ maxLength: 12 }).map((t) => new Auth(right, `wrong-${t}`))),
      fc.constant(new Ping()),
      fc.constant(new Status()),
      fc.constant(new Observe()),
      fc.tuple(fc.boolean(), fc.constantFrom(-1, 0, 1, 3, 100, 1000)).map(([c, l]) => new Events(c, l)),
      fc.constantFrom(...types, "conformance.session").map((t) => new Act(t)),
      nonStandardJson({ kinds: ["truncated", "trailing-comma", "nan-infinity"] }).map((g) => new Garbage(g.text)),
    ];
    return ctx.property(
      fc.commands(commands, { maxCommands: 20, replayPath: ctx.replayPath }),
      async (cmds) => {
        const conn = await ctx.session();
        const real: Real = {
          ctx,
          conn,
          accepted: new Set(),
          cursor0: await latestSeq(ctx, conn),
          step: 0,
          served: true,
        };
        const model: Model = {
          open: true,
          token: ctx.tokenConfigured,
          authorized: true,
          observationSeq: -Infinity,
          commandSeq: -Infinity,
          cursor: real.cursor0,
        };
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
        } catch (err) {
          // A session that goes wrong fails the rule it broke, once; the smoke rule where the fault is the session's.
          // A new connection not served is the harness's to attribute (runCase), like any check's.
          if (err instanceof Fault && err.kind === "violation" && err.detail.rule !== UNSERVED_CONNECTION) {
            const { rule = "validation.protocol-smoke", expected = "", actual = "", oracle } = err.detail;
            const failed = fail(err.message, expected, actual, [rule]);
            return oracle ? judgedBy(oracle, failed) : failed;
          }
          throw err;
        }
        if (real.accepted.size) {
          const watcher = await ctx.session();
          const done = await collectCompletions(ctx, watcher, real.cursor0, real.accepted);
          const lost = [...real.accepted].filter((s) => !done.has(s));
          // Not found under the commandSeq act answered: where act answers one number twice, that is the cause.
          const repeated = lost.length
            ? await seqRepeated(ctx, watcher, { type: "conformance.noop" }, lost[0]!)
            : undefined;
          if (repeated) return repeated;
          if (lost.length) await seqsAcrossConnections(ctx, watcher);
          check(
            lost.length === 0,
            "integration.command-completion",
            `${lost.length} accepted commands never completed.`,
            "a command_completed per accepted command",
            `missing commandSeq ${lost.join(", ")}`,
          );
        }
        return pass("session matched the model");
      },
      { restartAfterFailure: true },
    );
  },
};

export const checks: Check[] = [statefulSession];
