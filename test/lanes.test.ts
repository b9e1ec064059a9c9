import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import type { Verdict } from "../protocol/verdict.js";
import type { Report } from "../reports/types.js";
import type { CheckResult } from "../runner/aggregate.js";
import type { RunConfig } from "../runner/run/config.js";
import { joinStates, LANE_PACE_MS, laneCount } from "../runner/run/lanes.js";
import { floats, plan } from "../runner/run/plan.js";
import { Floating, RunState } from "../runner/run/state.js";
import { embeddedTarget } from "../runner/targets.js";
import { type Check, CommandLedger, pass } from "../suites/harness/check.js";
import { allChecks } from "../suites/index.js";
import { cli, interruptedCli, readReport, runSuite, TEST_TOKEN, verdicts } from "./helpers.js";

// A spawned bridge started several times (--lanes), each bridge judging a shard of the run side by side: the
// verdicts, cases and root causes are those of one bridge; only the time differs. Lanes are for a game loop slower
// than this tool: the bridges here complete one command each 20 ms, as a game's tick would.

const dir = mkdtempSync(join(tmpdir(), "aicc-lanes-"));
const bridgeCli = `${process.execPath} dist/bridges/reference/cli.js`;
const env = { ...process.env, FONLINE_AI_TOKEN: TEST_TOKEN };
/** Rules whose checks wait on completions, kill the bridge and share nothing: each kind is dealt to some lane. */
const RULES =
  "wire.utf8,wire.ndjson,error.parse,error.queue-full,command.x,command.y,method.act,integration.command-completion";

async function run(spawnCmd: string, lanes: number, name: string, only: string[] = ["--rules", RULES]) {
  const json = join(dir, `${name}-${lanes}.json`);
  const args = ["--spawn", spawnCmd, "--profile", "quick", "--seed", "5", "--lanes", `${lanes}`, "--json", json];
  const r = await cli([...args, ...only], env);
  return { ...r, report: readReport(json) };
}

const causes = (report: Report) =>
  (report.rootCauses ?? [])
    .map((c) => ({ ...c, failed: [...c.failed].sort() }))
    .sort((a, b) => a.rule.localeCompare(b.rule));

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

const processesWith = (marker: string) =>
  execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(marker) && !line.includes("ps -eo"));

describe("the lanes' states joined", () => {
  const check = (id: string): Check => ({ id, rules: [], description: id, run: async () => pass("") });
  const result = (id: string, verdict: Verdict): CheckResult => ({
    check: check(id),
    finding: { verdict, message: verdict },
    report: { id, verdict, message: verdict } as CheckResult["report"],
  });
  const state = (...results: CheckResult[]) => {
    const s = new RunState();
    for (const r of results) s.results.set(r.check.id, r);
    return s;
  };

  it("keep every check's result in the catalogue's order, and what each lane's canary found, once, the worst", () => {
    const checks = ["a/one", "b/two", "c/three"].map(check);
    const joined = joinStates(
      [
        state(result("c/three", "pass"), result("preflight/method.events", "warn"), result("a/one", "fail")),
        state(result("b/two", "pass"), result("preflight/method.events", "fail"), result("canary/x", "pass")),
      ],
      checks,
    );
    expect([...joined.results.keys()]).toEqual(["a/one", "b/two", "c/three", "preflight/method.events", "canary/x"]);
    expect(joined.results.get("preflight/method.events")!.finding.verdict).toBe("fail");
    expect(joined.failures).toBe(2);
  });
});

describe("the number of lanes", () => {
  const ledger = (ms: number) => {
    const l = new CommandLedger();
    for (let i = 0; i < 3; i++) l.step(ms);
    return l;
  };
  const config = (o: Partial<RunConfig> = {}, paced = true) =>
    ({
      contract,
      checks: allChecks,
      target: { endpoint: "127.0.0.1:1", restart: async () => {} },
      selected: () => true,
      lanes: { count: 3, paced, open: async () => ({}) },
      ...o,
    }) as unknown as RunConfig;

  it("by default follows the game loop's pace: none more where the loop keeps up with this tool", () => {
    expect(laneCount(config(), ledger(1))).toBe(1);
    expect(laneCount(config(), ledger(LANE_PACE_MS - 0.5))).toBe(1);
    expect(laneCount(config(), new CommandLedger())).toBe(1); // no pace read: nothing says more would pay
    expect(laneCount(config(), ledger(10))).toBe(3);
  });

  it("asked for by number, is what was asked whatever the pace", () => {
    expect(laneCount(config({}, false), ledger(1))).toBe(3);
  });

  it("is one where the run counts over one bridge, and no more than the units to deal", () => {
    expect(laneCount(config({ shard: { index: 1, count: 2 } }), ledger(10))).toBe(1);
    expect(laneCount(config({ durationMs: 60_000 }), ledger(10))).toBe(1);
    expect(laneCount(config({ maxFailures: 1 }), ledger(10))).toBe(1);
    expect(laneCount(config({ onlyChecks: new Set(["method.ping/ok", "wire.utf8/malformed"]) }), ledger(10))).toBe(2);
    expect(laneCount(config({ onlyChecks: new Set(["method.ping/ok"]) }), ledger(10))).toBe(1);
    expect(laneCount(config({ signal: AbortSignal.abort() }), ledger(10))).toBe(1);
  });
});

/** A run's configuration as plan() reads it: every check, a bridge this tool can restart. */
const laneConfig = (shard?: RunConfig["shard"]) =>
  ({
    contract,
    checks: allChecks,
    target: { endpoint: "127.0.0.1:1", restart: async () => {} },
    selected: () => true,
    ...(shard ? { shard } : {}),
  }) as unknown as RunConfig;

describe("the checks that float among the lanes", () => {
  const config = laneConfig;

  it("are the checks that wait on the game loop alone and share no state, outside every lane's shard", () => {
    const whole = plan(config(), true).chosen;
    const lanes = [1, 2, 3].map((index) => plan(config({ index, count: 3 }), true, true));
    const floating = lanes[0]!.floating;
    expect(floating.length).toBeGreaterThan(0);
    expect(floating.every((c) => c.needs?.length && !c.state && !c.inherits)).toBe(true);
    for (const lane of lanes) expect(lane.floating).toEqual(floating);
    // Every check of the run once: in one lane's shard, or floating.
    const dealt = [...lanes.flatMap((lane) => lane.chosen), ...floating].map((c) => c.id);
    expect(new Set(dealt).size).toBe(dealt.length);
    expect(dealt.sort()).toEqual(whole.map((c) => c.id).sort());
    expect(lanes.flatMap((lane) => lane.chosen).some(floats)).toBe(false);
    // Where no lanes deal them, nothing floats.
    expect(plan(config({ index: 1, count: 3 }), true).floating).toEqual([]);
  });

  it("go to whichever lane asks, and a lane that can no longer judge leaves them to another, unless it is the last", () => {
    const checks = ["a", "b", "c", "d"].map(
      (id): Check => ({ id, rules: [], description: id, run: async () => pass("") }),
    );
    const floating = new Floating(checks);
    floating.join();
    floating.join();
    expect(floating.take(true)?.id).toBe("a");
    expect(floating.take(false)).toBeUndefined(); // another lane can still judge them
    floating.leave();
    expect(floating.take(true)?.id).toBe("b");
    // The last lane left takes the rest whatever it can judge: each is recorded, never lost.
    expect(floating.take(false)?.id).toBe("c");
    expect(floating.take(false)?.id).toBe("d");
    expect(floating.left()).toBe(false);
    expect(floating.take(true)).toBeUndefined();
  });
});

describe("lanes where the checks cannot be judged", () => {
  it("record every check: a blocked further lane left last takes the floating checks no lane could judge", async () => {
    // The run's bridge completes nothing (its checks that need completions cannot be judged, so it leaves the floating
    // ones to the others); the further bridges reject the run's token (blocked at their preflight).
    class NoLoop extends ReferenceBridge {
      protected override drainOne(): void {}
    }
    const other = "another-bridge-token-0123456789ab";
    const open = () =>
      embeddedTarget(({ port }) => new ReferenceBridge({ token: other, port }), other, "further bridge");
    const report = await runSuite((token) => new NoLoop({ token }), {
      lanes: { count: 3, paced: false, open },
      runs: 2,
    });
    expect(report.time?.lanes?.count).toBe(3);
    const recorded = new Set(report.rules.flatMap((r) => r.checks).map((c) => c.id));
    const floating = plan({ ...laneConfig(), shard: { index: 1, count: 3 } }, true, true).floating;
    expect(floating.length).toBeGreaterThan(0);
    for (const check of floating) expect(recorded.has(check.id), check.id).toBe(true);
    for (const check of allChecks) expect(recorded.has(check.id), check.id).toBe(true);
  }, 60_000);
});

describe("--lanes", () => {
  for (const mutant of ["move-loop-dies-on-string-x", "dies-on-malformed-utf8"]) {
    it(`gives the verdicts, cases and root causes of one bridge (${mutant})`, async () => {
      const cmd = `${bridgeCli} --mutant ${mutant} --drain-ms 20`;
      // Side by side: each on bridges of its own.
      const [one, three] = await Promise.all([run(cmd, 1, mutant), run(cmd, 3, mutant)]);
      expect(one.report.summary.fail).toBeGreaterThan(0);
      expect(verdicts(three.report)).toEqual(verdicts(one.report));
      expect(causes(three.report)).toEqual(causes(one.report));
      expect(three.code).toBe(one.code);
      expect(one.report.time?.lanes).toBeUndefined();
      // The time line's parts add up to the lanes' time together, each lane's from the run's start to its end.
      const { parts, lanes } = three.report.time!;
      expect(lanes?.count).toBe(3);
      const sum = parts!.restartingMs + parts!.recheckingMs + parts!.shrinkingMs + parts!.checksMs;
      if (!parts!.overlap) expect(sum).toBe(lanes!.totalMs);
      expect(lanes!.totalMs).toBeLessThanOrEqual(3 * three.report.durationMs);
      expect(three.out).toMatch(/on 3 bridges side by side/);
    }, 120_000);
  }

  it("goes on with the bridges that start where a further one cannot (a fixed port), and says so once", async () => {
    const port = await freePort();
    const fixed = await run(`${bridgeCli} --port ${port} --drain-ms 20`, 3, "fixed", [
      "--rules",
      "wire.utf8,method.ping",
    ]);
    expect(fixed.code).toBe(0);
    expect(fixed.err.match(/--lanes 3: a further bridge did not start/g)).toHaveLength(1);
    expect(fixed.err).toMatch(/the run goes on with 1\n/);
    expect(fixed.report.time?.lanes).toBeUndefined();
    expect(fixed.report.summary.fail + fixed.report.summary.error).toBe(0);
  }, 60_000);

  it("does not take a further bridge whose ready line names one already in the run", async () => {
    const port = await freePort();
    // A wrapper that says the fixed port whether or not its own bridge could listen there (the first says it after its
    // bridge did, which starts in well under the 3 s even on a busy machine).
    const wrapper = `${bridgeCli} --port ${port} --drain-ms 20 & sleep 3; echo '{"host":"127.0.0.1","port":${port}}'; wait`;
    const shared = await run(wrapper, 3, "shared", ["--rules", "wire.utf8,method.ping"]);
    expect(shared.err).toMatch(
      new RegExp(`a further bridge did not start \\(it said it listens on 127\\.0\\.0\\.1:${port}, as another does\\)`),
    );
    expect(shared.report.time?.lanes).toBeUndefined();
    expect(shared.code).toBe(0);
  }, 60_000);

  it("on Ctrl-C stops every lane, writes the report and exits 130, leaving no bridge behind", async () => {
    const marker = "--drain-ms 23";
    const json = join(dir, "interrupted.json");
    // Once a check has ended (the lanes are started before the first check begins): one Ctrl-C.
    const args = ["--spawn", `${bridgeCli} ${marker}`, "--profile", "thorough", "--lanes", "3", "--json", json];
    const { code, out } = await interruptedCli(args, /✓ \S+ \d+ ms/, 500, env);
    expect(code, out.slice(-2000)).toBe(130);
    const report = readReport(json);
    expect(report.interrupted).toBe(true);
    expect(report.time?.lanes?.count).toBe(3);
    expect(
      report.rules.flatMap((r) => r.checks).some((c) => c.message?.startsWith("not run: the run was interrupted")),
    ).toBe(true);
    expect(processesWith(marker).filter((line) => !line.includes("dist/bin.js"))).toEqual([]);
  }, 60_000);

  it("takes --spawn: an endpoint or the built-in bridge is one bridge (exit 2, naming the flag)", async () => {
    const r = await cli(["--lanes", "2", "--check", "method.ping/ok"], env);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--lanes 2 starts the bridge more than once, so it takes --spawn/);
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it("starts no more bridges than the run has checks to deal, and leaves none behind", async () => {
    const marker = "--drain-ms 21";
    const single = await run(`${bridgeCli} ${marker}`, 3, "single", ["--check", "method.ping/ok"]);
    expect(single.code).toBe(0);
    expect(single.report.time?.lanes).toBeUndefined();
    const two = await run(`${bridgeCli} ${marker}`, 3, "two", [
      "--check",
      "method.ping/ok",
      "--check",
      "wire.utf8/malformed",
    ]);
    expect(two.report.time?.lanes?.count).toBe(2);
    expect(processesWith(marker)).toEqual([]);
  }, 60_000);
});
