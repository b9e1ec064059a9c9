import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { type Json, type JsonObject, ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import type { Report } from "../reports/types.js";
import { clientChecks } from "../suites/client/index.js";
import { runClientProcess } from "../suites/client/process.js";
import { Connection } from "../suites/harness/connection.js";
import { type BridgeCpu, bridgeLoss, Machine, machine, runQueueMs, treeSchedstat } from "../suites/harness/machine.js";
import { allChecks } from "../suites/index.js";
import { problems, runClientSuite, runSuite, verdictOf } from "./helpers.js";

// Verdicts on a busy machine: while this file keeps two busy processes running, a conformant bridge and a
// conformant client pass, and timing faults (a bridge that never answers one method, a client that never gives
// up) still fail. The busy processes end on their own clock too, should this file die before afterAll.

const CLIENT = "node dist/bridges/clients/reference.js --host {host} --port {port} --timeout {timeout} ping";
const FAST = { maxEvents: 40, maxQueuedCommands: 16, drainIntervalMs: 2 };
let busy: ChildProcess[] = [];

beforeAll(() => {
  const script = "const end = Date.now() + 120000; while (Date.now() < end) {}";
  busy = [0, 1].map(() => spawn(process.execPath, ["-e", script], { stdio: "ignore" }));
});

afterAll(async () => {
  await Promise.all(
    busy.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const gone = once(child, "exit");
      child.kill("SIGKILL");
      return gone;
    }),
  );
});

const clientRun = (command: string, checks: string[]): Promise<Report> =>
  runClientSuite(command, { seed: 5, runs: 20, recheck: 1, onlyChecks: new Set(checks) });

const checkOf = (report: Report, id: string) => report.rules.flatMap((r) => r.checks).find((c) => c.id === id);

describe("under load (two busy processes beside the tests)", () => {
  it("the reference bridge passes the quick profile, with no failure and no error", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token, ...FAST }), { profile: "quick", recheck: 1 });
    expect(problems(report)).toEqual([]);
  }, 60_000);

  it("the reference client passes the checks that time it, with no failure and no error", async () => {
    const checks = [...clientChecks.filter((c) => c.rules.includes("validation.finite-timeout")).map((c) => c.id)];
    checks.push("validation.malformed-peer/no-reply", "wire.request-envelope/client-request");
    const report = await clientRun(CLIENT, checks);
    expect(problems(report)).toEqual([]);
    for (const id of checks) expect(checkOf(report, id)?.verdict, id).toBe("pass");
  }, 60_000);

  it("a bridge that never answers observe still fails method.observe", async () => {
    const mutant = mutants.find((m) => m.name === "observe-never-answers")!;
    const report = await runSuite((token) => mutant.create({ token, ...FAST }), {
      checks: allChecks.filter((c) => c.id === mutant.check),
      timeoutMs: 400,
      recheck: 1,
    });
    expect(verdictOf(report, "method.observe")).toBe("fail");
    expect(checkOf(report, mutant.check)?.reproduced?.grade).toBe("consistent");
  }, 60_000);

  it("a client that never gives up still fails validation.finite-timeout, on every try", async () => {
    const report = await clientRun(`${CLIENT} --mutant no-timeout`, ["validation.finite-timeout/silence"]);
    const check = checkOf(report, "validation.finite-timeout/silence");
    expect(check?.verdict).toBe("fail");
    expect(check?.reproduced?.grade).toBe("consistent");
  }, 60_000);
});

describe("the machine's own stalls", () => {
  /** Holds this process's event loop for `ms`, as a long synchronous task or a descheduled process would. */
  const stand = (ms: number) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {}
  };

  it("are measured: a stall of the event loop counts as time lost", () => {
    const mark = machine.mark();
    stand(300);
    // At least the stall, less the sampler's period and its threshold: however busy the machine, never less.
    expect(machine.since(mark)).toBeGreaterThanOrEqual(300 - 60);
  });

  it("count the time this process waited for a CPU, and a stall that was such a wait once", () => {
    let queued = 0;
    const measured = new Machine(() => queued);
    const mark = measured.mark();
    queued += 500;
    expect(measured.since(mark)).toBe(500);
    // A stall while descheduled shows both as lateness and as time queued: counted once, so never more than the
    // time that passed (and the sampler's period, as lateness counts from the tick planned before the mark).
    const t0 = Date.now();
    const again = measured.mark();
    stand(300);
    queued += 300;
    const lost = measured.since(again);
    expect(lost).toBeGreaterThanOrEqual(300);
    expect(lost).toBeLessThanOrEqual(Date.now() - t0 + 20);
  });

  it("credit a bridge's pace with no more than its own processes waited for a CPU", () => {
    let queued = 0;
    const measured = new Machine(() => queued);
    let bridge: BridgeCpu | undefined = { pid: 7, waitMs: 100, runMs: 50 };
    // A bridge whose game loop sleeps between steps waited 20 ms while this process waited 500.
    const lost = bridgeLoss(() => bridge, measured);
    queued += 500;
    bridge = { pid: 7, waitMs: 120, runMs: 60 };
    expect(lost()).toBe(20);
    // Where the bridge is not known (an endpoint), was started afresh since, or its processes did not run (they only
    // had the bridge started), this process's loss stands.
    const unknown = bridgeLoss(undefined, measured);
    queued += 300;
    expect(unknown()).toBe(300);
    bridge = { pid: 7, waitMs: 0, runMs: 0 };
    const restarted = bridgeLoss(() => bridge, measured);
    bridge = { pid: 8, waitMs: 5, runMs: 10 };
    queued += 200;
    expect(restarted()).toBe(200);
    bridge = { pid: 9, waitMs: 0, runMs: 3 };
    const idle = bridgeLoss(() => bridge, measured);
    bridge = { pid: 9, waitMs: 0, runMs: 3.5 };
    queued += 100;
    expect(idle()).toBe(100);
    // A moment this process stood still may have been the whole machine's: credited, though the bridge waited for
    // no CPU.
    bridge = { pid: 8, waitMs: 0, runMs: 0 };
    const still = bridgeLoss(() => bridge, new Machine(() => 0));
    bridge = { pid: 8, waitMs: 0, runMs: 10 };
    stand(300);
    const stood = still();
    expect(stood).toBeGreaterThanOrEqual(300 - 60);
    expect(stood).toBeLessThanOrEqual(300 + 60);
    // A bridge that waited more than this process lost is credited with no more than that.
    bridge = { pid: 8, waitMs: 0, runMs: 0 };
    const busy = bridgeLoss(() => bridge, measured);
    bridge = { pid: 8, waitMs: 900, runMs: 10 };
    queued += 100;
    expect(busy()).toBe(100);
  });

  it("read what a process tree had of the CPUs, its children's included, where the system says", async () => {
    if (process.platform !== "linux") return;
    // A shell whose child spins: the tree ran, though the shell itself only waits.
    const tree = spawn("sh", ["-c", "node -e 'for (const t = Date.now(); Date.now() - t < 4000;);' & wait"], {
      stdio: "ignore",
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
      const first = treeSchedstat(tree.pid!)!;
      await new Promise((resolve) => setTimeout(resolve, 200));
      const then = treeSchedstat(tree.pid!)!;
      expect(then.runMs - first.runMs).toBeGreaterThan(20);
      expect(then.waitMs).toBeGreaterThanOrEqual(first.waitMs);
      expect(treeSchedstat(2 ** 22 + 12345)).toBeUndefined(); // no such process
    } finally {
      tree.kill("SIGKILL");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it("are read from the system where it says how long this process waited for a CPU", () => {
    if (process.platform !== "linux") return;
    expect(runQueueMs()).toBeTypeOf("number");
  });

  it("do not make a client that ended during one a client still running", async () => {
    const exit = runClientProcess({
      command: "exit 0",
      env: { PATH: process.env.PATH },
      budgetMs: 200,
      requestAt: () => undefined,
    });
    stand(1500);
    expect((await exit).killed).toBe(false);
  });

  it("do not let a client whose timeout bounds each read pass the drip-feed for a pause this tool made", async () => {
    // This process stands still for longer than the client's timeout while it drips the reply: a client that times
    // out each read leaves then, as one bounding the whole request would; that try cannot tell them apart.
    const stall = setTimeout(() => stand(1300), 600);
    const report = await clientRun(`${CLIENT} --mutant per-read-timeout`, ["validation.finite-timeout/drip-feed"]);
    clearTimeout(stall);
    expect(checkOf(report, "validation.finite-timeout/drip-feed")?.verdict).toBe("warn");
  }, 60_000);

  it("do not make a history fill the bridge can make look too slow for the budget", async () => {
    // The machine stands still while the bridge completes its first commands: five commands over 600 ms would
    // project a fill of minutes, though the bridge completes one every few milliseconds.
    const mutant = mutants.find((m) => m.name === "limit-clamped-at-499")!;
    const report = await runSuite(
      (token) => {
        const bridge = mutant.create({ token, ...FAST });
        // The instance's act, held up on the second command: the stall is this process's, as the bridge is in it.
        const held = bridge as unknown as { act(params: JsonObject): Json };
        const act = held.act.bind(bridge);
        let acts = 0;
        held.act = (params) => {
          if (++acts === 2) stand(600);
          return act(params);
        };
        return bridge;
      },
      { checks: allChecks.filter((c) => c.id === mutant.check), timeoutMs: 400, profile: "quick" },
    );
    expect(checkOf(report, mutant.check)?.verdict, checkOf(report, mutant.check)?.message).toBe("fail");
  }, 60_000);

  it("still skip a fill whose bridge is too slow for the budget, having measured it", async () => {
    const report = await runSuite(
      (token) => new ReferenceBridge({ token, maxEvents: contract.limits.eventsLimitMax + 20, drainIntervalMs: 40 }),
      { checks: allChecks.filter((c) => c.id === "method.events/limit-max"), timeoutMs: 400, profile: "quick" },
    );
    const check = checkOf(report, "method.events/limit-max");
    expect(check?.verdict).toBe("skip");
    expect(check?.message).toMatch(/at this bridge's pace \(\d+\.\d ms a command, measured over \d+\)/);
  }, 60_000);

  it("do not make a reply that came during one a missing reply", async () => {
    // An echo server in another process answers while this one stands still past the read's timeout.
    const server = spawn(
      process.execPath,
      [
        "-e",
        `const s = require("net").createServer((c) => c.on("data", (d) => c.write(d))).listen(0, "127.0.0.1", () =>
          console.log(s.address().port)); setTimeout(() => process.exit(), 60000);`,
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    try {
      const [chunk] = (await once(server.stdout!, "data")) as [Buffer];
      const conn = await Connection.open("127.0.0.1", Number(chunk.toString().trim()), {
        connectTimeoutMs: 5000,
        maxLineBytes: contract.limits.maxLineBytes,
      });
      expect((await conn.exchange("first", 5000)).kind).toBe("line");
      conn.write("second\n");
      const reply = conn.read(100);
      stand(1500);
      expect((await reply).kind).toBe("line");
      conn.close();
    } finally {
      server.kill("SIGKILL");
    }
  });
});
