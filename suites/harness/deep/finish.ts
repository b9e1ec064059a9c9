// The end of a deep session: every accepted command followed to its completion, and a completion the follower
// read past without getting it blamed on events, not on completion.

import { type Finding, resultOf, rpc, violation } from "../check.js";
import type { Connection } from "../connection.js";
import { collectCompletions, readEvents } from "../events.js";
import { judgeCompletion } from "../lifecycle.js";
import type { DeepReal } from "./real.js";

/**
 * Reads the whole retained history from its start: a completion of `missing` found there at a seq a reader
 * following with a cursor has passed (at or below `passed`) was skipped by events after that cursor.
 */
async function skippedOver(
  real: DeepReal,
  conn: Connection,
  missing: ReadonlySet<number>,
  passed: number,
): Promise<void> {
  const { ctx, m } = real;
  const max = ctx.contract.limits.eventsLimitMax;
  let cursor = 0;
  for (let pages = 0; pages < 64; pages++) {
    const { events, latestSeq } = await readEvents(ctx, conn, cursor, max, m.id("window"));
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
export async function finish(real: DeepReal): Promise<Finding | undefined> {
  const { ctx, m } = real;
  real.closeAll();
  if (!m.accepted.size) return undefined;
  // A completion already read twice, or malformed, fails without waiting for the rest.
  for (const [seq, command] of m.accepted) {
    const list = m.completions.get(seq);
    const broken = list && judgeCompletion(list, seq, command, ["integration.command-completion"]);
    if (broken) return broken;
  }
  const waiting = new Set([...m.accepted.keys()].filter((k) => !m.completions.has(k)));
  if (!waiting.size) return undefined;
  const watcher = await ctx.session();
  // A completion the follower read past without getting it is a fault of events, not of completion.
  await skippedOver(real, watcher, waiting, m.followCursor);
  // Those the follower may have lost to a small history, with the queue empty, are not waited for.
  const queued = resultOf(await ctx.call(watcher, rpc("status", {}, m.id("finish"))))?.queuedCommands;
  const gone = waiting.size <= m.unseen && queued === 0;
  const done = gone
    ? undefined
    : await collectCompletions(ctx, watcher, m.followCursor, waiting, { unseenBefore: m.unseen });
  for (const [key, list] of done ?? []) {
    if (list.every((c) => c.evicted)) continue;
    m.completions.set(key, [...(m.completions.get(key) ?? []), ...list]);
  }
  const absent = new Set([...waiting].filter((k) => !m.completions.has(k)));
  // The collector followed the events from the follower's cursor and gave up on these: one retained now was
  // never returned to it (or completed just as it gave up, after twice the reply timeout without a completion:
  // a failure either way).
  if (absent.size && done) await skippedOver(real, watcher, absent, Number.POSITIVE_INFINITY);
  const missing = [...waiting].filter((k) => !m.completions.has(k));
  // Completions a small history dropped before they could be read are not held against the bridge.
  const unobservable = missing.length <= (done ? done.unseen : m.unseen);
  for (const [seq, command] of m.accepted) {
    if (unobservable && missing.includes(seq)) continue;
    const broken = judgeCompletion(m.completions.get(seq), seq, command, ["integration.command-completion"]);
    if (broken) return broken;
  }
  return undefined;
}
