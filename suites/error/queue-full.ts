import {
  type Check,
  type CheckContext,
  describeReply,
  errorCode,
  type Finding,
  fail,
  pass,
  rpc,
  skip,
} from "../harness/check.js";
import { sleep } from "../harness/connection.js";
import { ACCEPTED, judgedBy, statusLimit } from "../harness/expect.js";
import { plainCompletes } from "../harness/plain.js";
import { emptyQueue, Ledger } from "../integration/bounded-state.js";

/** Rejections to see: the first, where the flood fills the queue, then each after a completion freed one slot. */
const ROUNDS = 4;
/** The type the flood acts with; a plain command of it is known to complete before the queue is judged. */
const FLOOD = "conformance.flood";

export const queueFull: Check = {
  id: "error.queue-full/flood",
  rules: ["error.queue-full", "integration.bounded-state"],
  needs: ["completions"],
  description:
    "Waits for an empty queue, then floods act on one connection (bounded in count and time), reading events " +
    "between acts, until the queue-full error; then, three times, waits for one completion and acts until it comes again, so acts " +
    "land exactly at the limit; then follows every accepted command to its completion and checks act is accepted " +
    "again.",
  note:
    "a command counts against maxQueuedCommands from its acceptance until its completion event: the queue-full " +
    "error exactly when maxQueuedCommands are outstanding, never with fewer, and never an acceptance with that many",
  async run(ctx) {
    const conn = await ctx.session();
    const max = await statusLimit(ctx, conn, "maxQueuedCommands");
    if (typeof max !== "number") return max;
    const busy = (await emptyQueue(ctx, conn)) ?? (await plainCompletes(ctx, conn, FLOOD));
    if (busy) return busy;
    const ledger = await Ledger.open(ctx, conn);
    const code = ctx.contract.codes["error.queue-full"];
    const attempts = max * 4 + 100;
    const stopAt = Date.now() + Math.min(ctx.timeBudgetMs, 10_000);
    const { verdict, rejections, mostAtAcceptance } = await flood(ctx, ledger, max, code, attempts, stopAt);
    await ledger.drain();
    const lost = ledger.provablyLost;
    if (lost > 0) {
      const never = ledger.pending;
      return judgedBy(
        {
          kind: "ledger",
          judge: "flood",
          start: "cursor",
          limitFrom: "status",
          codes: [code!],
          at: "cursor",
          more: attempts,
          act: { type: FLOOD },
        },
        fail(
          `${lost} of ${ledger.accepted.size} accepted commands never completed: the queue dropped or overwrote them.`,
          "every accepted command completes; a full queue rejects new ones",
          `no completion seen for commandSeq ${never.slice(0, 10).join(", ")}${never.length > 10 ? ", …" : ""}`,
          ["integration.bounded-state", "error.queue-full"],
        ),
      );
    }
    if (verdict) return verdict;
    if (rejections === 0)
      return skip(
        mostAtAcceptance < max
          ? `The queue never filled: ${ledger.accepted.size} acts were all accepted with at most ` +
              `${mostAtAcceptance} outstanding at once (by the completions read between acts), below ` +
              `maxQueuedCommands ${max}: the bridge drains faster than this tool fills it, so ${code} was not due.`
          : `${ledger.accepted.size} acts were all accepted; the completions read between them left open whether ` +
              `${max} were ever outstanding at once, so whether ${code} was due cannot be told.`,
      );
    const again = await ledger.send(rpc("act", { type: "conformance.after-flood" }, "again"));
    await ledger.drain();
    if (again.commandSeq === undefined)
      return judgedBy(
        { kind: "result", expect: ACCEPTED, at: "again" },
        fail(
          "After the queue drained, act was still not accepted.",
          "accepted again once drained",
          describeReply(again.reply),
          ["error.queue-full"],
        ),
      );
    return pass(
      `${code} came only with maxQueuedCommands ${max} outstanding (${rejections} times) and no act was accepted ` +
        `beyond it; all ${ledger.accepted.size} accepted commands completed, and act was accepted again once drained.`,
    );
  },
};

/**
 * Acts until the queue-full error has come ROUNDS times (after the first, each once a completion freed a slot),
 * judging every reply against the commands the ledger counts outstanding.
 */
async function flood(
  ctx: CheckContext,
  ledger: Ledger,
  max: number,
  code: number | undefined,
  attempts: number,
  stopAt: number,
): Promise<{ verdict?: Finding; rejections: number; mostAtAcceptance: number }> {
  let verdict: Finding | undefined;
  let rejections = 0;
  let mostAtAcceptance = 0; // the most commands that may have been outstanding when one was accepted
  for (let i = 0; i < attempts && Date.now() < stopAt; i++) {
    const { reply, atMost, atLeast, commandSeq } = await ledger.send(rpc("act", { type: FLOOD, intArg: i }, i));
    const counted = (finding: Finding) =>
      judgedBy(
        {
          kind: "ledger",
          judge: "act",
          start: "cursor",
          limitFrom: "status",
          codes: [code!],
          at: i,
          more: attempts,
          act: { type: FLOOD },
        },
        finding,
      );
    if (commandSeq !== undefined) {
      mostAtAcceptance = Math.max(mostAtAcceptance, atMost);
      if (atLeast >= max) {
        verdict = counted(
          fail(
            `act was accepted while at least ${atLeast} accepted commands had not completed, ` +
              `with maxQueuedCommands ${max}: the queue took more than its limit.`,
            `${code} while ${max} accepted commands are outstanding`,
            `${describeReply(reply)} (${ledger.accepted.size - 1} accepted before it, ` +
              `completions of at most ${ledger.accepted.size - 1 - atLeast} of them seen or possible)`,
            ["error.queue-full", "integration.bounded-state"],
          ),
        );
        break;
      }
      continue;
    }
    if (errorCode(reply) !== code) {
      verdict = counted(
        fail(
          `act during the flood got neither an acceptance nor ${code}.`,
          `accepted, or ${code} once the queue is full`,
          describeReply(reply),
          ["error.queue-full"],
        ),
      );
      break;
    }
    if (atMost < max && ledger.foreign === 0) {
      verdict = counted(
        fail(
          `act was rejected with ${code} while at most ${atMost} accepted commands were outstanding, ` +
            `below maxQueuedCommands ${max}.`,
          `accepted while fewer than ${max} are outstanding`,
          `${describeReply(reply)} (${ledger.accepted.size} accepted, ` +
            `${ledger.accepted.size - atMost} of them seen completed before it)`,
          ["error.queue-full"],
        ),
      );
      break;
    }
    if (++rejections >= ROUNDS) break;
    // Wait for one completion: the next act then lands with exactly one slot free, and the one after on a full queue.
    // One the history dropped before it was read is not waited for: no command is then provably still queued.
    const done = ledger.done.size;
    const until = Date.now() + ctx.timeoutMs * 2;
    while (ledger.done.size === done && ledger.provablyLost > 0 && Date.now() < until)
      if (!(await ledger.poll())) await sleep(1);
  }
  return { verdict, rejections, mostAtAcceptance };
}

export const checks: Check[] = [queueFull];
