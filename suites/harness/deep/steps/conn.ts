// The connections' family: reconnects, dozens of connections in a row, half-closes, lines left unfinished at close,
// connections ended every way in turn, and observe on either connection.

import type { Slot } from "../../../../generators/sessionStep.js";
import { ENDED_CONNECTIONS, ENDINGS, type Ending } from "../../cells.js";
import { describeReply, type Reply, resultOf, rpc } from "../../check.js";
import type { Connection } from "../../connection.js";
import type { DeepModel } from "../model.js";
import { check, type DeepReal } from "../real.js";
import type { StepDefs } from "./step.js";

async function reconnect(real: DeepReal, slot: Slot, authorize: boolean): Promise<void> {
  await real.openSlot(slot, authorize);
  await real.ping(slot, undefined, false);
  real.cov.reach("conn.reconnect");
}

/** Opens and closes connections in a row, each authorized and pinged: a per-connection leak shows as one unserved. */
async function churn(model: DeepModel, real: DeepReal, count: number): Promise<void> {
  real.closeAll();
  for (let i = 1; i <= count; i++) {
    const conn = await real.ctx.connect();
    const served = (reply: Reply, what: string) =>
      check(
        reply.kind === "response" && !reply.response.error,
        "wire.sequential-connection",
        `Connection ${i} of ${count} opened and closed in a row: ${what} was not served.`,
        "every new connection served like the first",
        describeReply(reply),
      );
    if (real.ctx.tokenConfigured) served(await real.ctx.call(conn, real.ctx.authRequest(`churn-auth-${i}`)), "auth");
    else served(await real.ctx.call(conn, rpc("ping", {}, `churn-${i}`)), "ping");
    conn.close();
  }
  real.cov.reach("conn.churn");
  await real.openSlot(0, true);
  if (model.two) await real.openSlot(1, true);
}

/** A ping, then our FIN: the reply or a close are both allowed; a new connection must then be served. */
async function halfClose(model: DeepModel, real: DeepReal, slot: Slot): Promise<void> {
  const conn = real.conn(slot);
  const id = model.id("half-close");
  const sent = conn.write(`${JSON.stringify(rpc("ping", {}, id))}\n`);
  if (typeof sent !== "boolean") await sent;
  conn.endWrites();
  const reply = await real.ctx.read(conn, { expectId: id });
  if (reply.kind === "response" && model.slots[slot]!.auth === true)
    check(
      resultOf(reply)?.ok === true,
      "method.ping",
      "A ping before a half-close was not answered {ok:true}.",
      `{"ok":true} or a close`,
      describeReply(reply),
    );
  real.cov.reach("conn.half-closed");
  await real.openSlot(slot, true);
}

/** Part of a line, then a close: the next connection must start clean. */
async function partialClose(real: DeepReal, slot: Slot, text: string): Promise<void> {
  const conn = real.conn(slot);
  const sent = conn.write(text);
  if (typeof sent !== "boolean") await sent;
  conn.close();
  await real.openSlot(slot, true, "wire.ndjson");
  const reply = await real.call(slot, "ping", {});
  check(
    resultOf(reply)?.ok === true,
    "wire.ndjson",
    "After a connection closed with part of a line unsent, a ping on a new connection was not answered {ok:true}.",
    `{"ok":true}: each connection is its own stream of lines`,
    describeReply(reply),
  );
  real.cov.reach("conn.partial-line-at-close");
}

/** Ends a served connection `how`; a ping is on its way in all but the first way. */
async function end(real: DeepReal, conn: Connection, how: Ending, id: string): Promise<void> {
  const request = rpc("ping", {}, id);
  if (how === "after-line") await real.ctx.call(conn, request);
  else {
    const line = `${JSON.stringify(request)}\n`;
    await conn.write(how === "mid-line" ? line.slice(0, line.length >> 1) : line);
  }
  if (how === "by-reset") conn.reset();
  else conn.close();
}

/**
 * Connections opened in a row, each served once, then ended each way in turn (after a full exchange, halfway
 * through a line, before its reply is read, by a reset): what each ending leaves behind in the bridge adds up. Each
 * next connection must be served, and the last, status with the limits it advertised before.
 */
async function endings(model: DeepModel, real: DeepReal, count: number): Promise<void> {
  real.closeAll();
  let last: Ending | undefined;
  for (let i = 1; i <= count; i++) {
    const conn = await real.ctx.connect();
    const reply = real.ctx.tokenConfigured
      ? await real.ctx.call(conn, real.ctx.authRequest(`end-auth-${i}`))
      : await real.ctx.call(conn, rpc("ping", {}, `end-${i}`));
    check(
      reply.kind === "response" && !reply.response.error,
      "wire.sequential-connection",
      `Connection ${i} of ${count}, after ${i - 1} ended in turn${last ? ` (the last ${last})` : ""}: it was not served.`,
      "every new connection served, however the ones before it ended",
      describeReply(reply),
    );
    if (last) real.cov.reach(`conn.ended-${last}`);
    last = ENDINGS[(i - 1) % ENDINGS.length]!;
    await end(real, conn, last, `end-${i}-${last}`);
  }
  await real.openSlot(0, true, "wire.sequential-connection");
  if (model.two) await real.openSlot(1, true, "wire.sequential-connection");
  await real.ping(0, undefined, false);
  // status judges its limits against those the session read first: they must hold still.
  if (last) real.cov.reach(`conn.ended-${last}`);
  if ((await real.status(0)) && count >= ENDED_CONNECTIONS) real.cov.reach("conn.ended-many");
}

export const CONN_STEPS: StepDefs<"observe" | "reconnect" | "churn" | "half-close" | "partial-close" | "endings"> = {
  observe: { apply: (step, _model, real) => real.observe(step.slot) },
  reconnect: { apply: (step, _model, real) => reconnect(real, step.slot, step.authorize) },
  churn: { apply: (step, model, real) => churn(model, real, step.count) },
  "half-close": { apply: (step, model, real) => halfClose(model, real, step.slot) },
  "partial-close": { apply: (step, _model, real) => partialClose(real, step.slot, step.text) },
  endings: { apply: (step, model, real) => endings(model, real, step.count) },
};
