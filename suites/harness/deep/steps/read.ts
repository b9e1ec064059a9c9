// The reads' family: lines whose multibyte characters cross 4 to 64 KiB read boundaries, or two segments; and many
// complete lines in one write, crossing those boundaries and 1 MiB in total.

import type { Slot } from "../../../../generators/sessionStep.js";
import { sizeName } from "../../cells.js";
import { describeReply, resultOf, rpc, violation } from "../../check.js";
import type { DeepModel } from "../model.js";
import { check, type DeepReal } from "../real.js";
import type { StepDefs } from "./step.js";

/** The bytes before a request's string id, as rpc() lays the request out. */
const ID_OFFSET = Buffer.byteLength('{"jsonrpc":"2.0","id":"');

/**
 * A ping whose string id holds a multibyte character split across a read boundary: at `kib` KiB into the line
 * (the line then longer than that), or, with kib 0, just after the start. The line is written in two segments
 * cut inside the character; the id must come back as sent.
 */
async function boundaryLine(model: DeepModel, real: DeepReal, slot: Slot, kib: number, char: string): Promise<void> {
  const at = kib ? kib * 1024 : ID_OFFSET + 8;
  const id = `${"a".repeat(at - 1 - ID_OFFSET)}${char}${"z".repeat(8)}`;
  const s = model.slots[slot]!;
  const reply = await real.ctx.call(real.conn(slot), rpc("ping", {}, id), {
    splitAt: [at],
    delayMs: 2,
    anyId: true,
  });
  s.lastId = id;
  s.served++;
  real.cov.reach("read.split-character");
  if (kib) real.cov.reach(`read.line-${kib}k`);
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
  real.judgeAuthorization(slot, "ping", reply);
}

/** The bytes of each line of a burst, LF included: not a power of two, so lines straddle every read boundary. */
const BURST_LINE = 1000;

/**
 * Pings in one write, each padded with whitespace (JSON's own) to BURST_LINE bytes, over `kib` KiB in all: every
 * line must get its own reply, in the order of the lines, none lost and none merged with another.
 */
async function burst(model: DeepModel, real: DeepReal, slot: Slot, kib: number): Promise<void> {
  const count = Math.floor((kib * 1024) / BURST_LINE) + 1;
  const ids = Array.from({ length: count }, (_, i) => `burst-${sizeName(kib)}-${i + 1}`);
  const lines = ids.map((id) => {
    const text = JSON.stringify(rpc("ping", {}, id));
    return `${text.slice(0, -1)}${" ".repeat(BURST_LINE - 1 - text.length)}}\n`;
  });
  const conn = real.conn(slot);
  await conn.write(Buffer.from(lines.join(""), "utf8"));
  const s = model.slots[slot]!;
  for (const [i, id] of ids.entries()) {
    const reply = await real.ctx.read(conn, { anyId: true });
    const got = reply.kind === "response" ? reply.response.id : undefined;
    check(
      got === id,
      "wire.ndjson",
      `Of ${count} complete lines (${count * BURST_LINE} bytes) written in one write, line ${i + 1} was not answered in its turn.`,
      `one reply per line, in the order of the lines: id ${JSON.stringify(id)}`,
      reply.kind === "response" ? `id ${JSON.stringify(got)}: ${describeReply(reply)}` : describeReply(reply),
    );
    real.judgeAuthorization(slot, "ping", reply);
    if (s.auth === true)
      check(
        resultOf(reply)?.ok === true,
        "method.ping",
        "A ping written with others in one write was not answered {ok:true}.",
        `{"ok":true}`,
        describeReply(reply),
      );
  }
  s.lastId = ids.at(-1);
  s.served += count;
  real.cov.reach(`read.burst-${sizeName(kib)}`);
}

export const READ_STEPS: StepDefs<"long-line" | "split-char" | "burst"> = {
  "long-line": {
    async apply(step, model, real) {
      for (const kib of step.kibs) await boundaryLine(model, real, step.slot, kib, step.char);
    },
  },
  "split-char": { apply: (step, model, real) => boundaryLine(model, real, step.slot, 0, step.char) },
  burst: {
    async apply(step, model, real) {
      for (const kib of step.kibs) await burst(model, real, step.slot, kib);
    },
  },
};
