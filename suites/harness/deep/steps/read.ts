// The reads' family: lines whose multibyte characters cross 4 to 64 KiB read boundaries, or two segments.

import type { Slot } from "../../../../generators/sessionStep.js";
import { describeReply, rpc, violation } from "../../check.js";
import type { DeepModel } from "../model.js";
import type { DeepReal } from "../real.js";
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

export const READ_STEPS: StepDefs<"long-line" | "split-char"> = {
  "long-line": {
    async apply(step, model, real) {
      for (const kib of step.kibs) await boundaryLine(model, real, step.slot, kib, step.char);
    },
  },
  "split-char": { apply: (step, model, real) => boundaryLine(model, real, step.slot, 0, step.char) },
};
