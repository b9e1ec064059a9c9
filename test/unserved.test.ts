import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import { allChecks } from "../suites/index.js";
import { runSuite } from "./helpers.js";

/**
 * Never answers a connection whose first line is an act or not JSON, auth included; serves the others. From outside,
 * a connection never served, which only a session that acts first on a new connection meets.
 */
class UnservedAfterActFirst extends ReferenceBridge {
  protected override serve(socket: Socket): void {
    let head = Buffer.alloc(0);
    const first = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const lf = head.indexOf(10);
      if (lf < 0) return;
      socket.off("data", first);
      if (actOrGarbage(head.subarray(0, lf).toString())) {
        socket.resume();
        return;
      }
      socket.pause();
      socket.unshift(head);
      super.serve(socket);
      socket.resume();
    };
    socket.on("data", first);
  }
}

function actOrGarbage(line: string): boolean {
  try {
    return (JSON.parse(line) as { method?: unknown }).method === "act";
  } catch {
    return true;
  }
}

const stateful = allChecks.filter((c) => c.id === "validation.protocol-smoke/stateful");
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

// Whichever command of the stateful session first meets a connection that is never served (an act, a read, a
// malformed line), the fault is the connection's, not the command's rule.
describe("a connection never served", () => {
  it.concurrent.each(SEEDS)(
    "seed %i fails wire.sequential-connection alone",
    async (seed) => {
      const report = await runSuite((t) => new UnservedAfterActFirst({ token: t, drainIntervalMs: 2 }), {
        checks: stateful,
        seed,
        timeoutMs: 300,
        concurrency: 1,
      });
      const failed = report.rules.filter((r) => r.verdict === "fail");
      expect(failed.map((r) => [r.id.slice(contract.prefix.length + 1), r.checks.map((c) => c.message)])).toEqual([
        ["wire.sequential-connection", expect.any(Array)],
      ]);
    },
    60_000,
  );
});
