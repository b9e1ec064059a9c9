import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import type { Report, Reporter } from "../reports/types.js";
import { allChecks } from "../suites/index.js";
import { cli, readReport, runSuite, verdicts } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "aicc-scale-"));
const read = readReport;
const checkIds = (r: Report) => new Set(r.rules.flatMap((x) => x.checks.map((c) => c.id)));

describe("--shard and --merge", () => {
  it("split the checks into disjoint, complete shards whose reports merge into one", async () => {
    const files = [1, 2, 3].map((i) => join(dir, `shard${i}.json`));
    for (const [i, file] of files.entries()) {
      const r = await cli([
        "--profile",
        "quick",
        "--seed",
        "3",
        "--shard",
        `${i + 1}/3`,
        "--json",
        file,
        "--skip",
        "method.events",
      ]);
      expect(r.code).toBe(0);
    }
    const shards = files.map(read);
    const seen = shards.map(checkIds);
    const union = new Set(seen.flatMap((s) => [...s]));
    expect(seen[0]!.size + seen[1]!.size + seen[2]!.size).toBe(union.size);
    expect(union.size).toBe(allChecks.filter((c) => !c.rules.every((r) => r === "method.events")).length);
    expect(shards[0]!.rules.some((r) => r.reason?.startsWith("checked in another shard"))).toBe(true);
    // Checks that share a costly bridge state go to one shard, which makes it once for them all.
    const sharing = allChecks.filter((c) => c.state === "history" && union.has(c.id)).map((c) => c.id);
    expect(sharing.length).toBeGreaterThan(1);
    expect(seen.filter((s) => sharing.some((id) => s.has(id))).map((s) => sharing.every((id) => s.has(id)))).toEqual([
      true,
    ]);

    const merged = join(dir, "merged.json");
    const m = await cli(["--merge", ...files, "--json", merged]);
    expect(m.code).toBe(0);
    const report = read(merged);
    expect(report.rules).toHaveLength(contract.rules.length);
    expect(checkIds(report)).toEqual(union);
    expect(report.rules.some((r) => r.reason?.startsWith("checked in another shard"))).toBe(false);
    expect(report.summary.fail + report.summary.error).toBe(0);
  });

  it("reject a malformed shard and unreadable reports", async () => {
    expect((await cli(["--shard", "3/2"])).code).toBe(2);
    expect((await cli(["--shard", "x"])).err).toMatch(/--shard takes I\/N/);
    const r = await cli(["--merge", join(dir, "missing.json")]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cannot read .*missing.json/);
    expect((await cli(["stray.json"])).err).toMatch(/unexpected argument "stray.json"/);
  });
});

describe("--duration", () => {
  it("fuzzes with fresh seeds after the checks and stops at the deadline", async () => {
    const json = join(dir, "fuzz.json");
    // Quick checks only, so that rounds have time left after them on a busy machine too: the deep session,
    // which judges wire.utf8 as well, can take the whole four seconds there, and no round is then due.
    const r = await cli([
      "--profile",
      "quick",
      "--check",
      "error.method-not-found/unknown-method,wire.utf8/malformed,wire.utf8/unicode-text",
      "--duration",
      "4s",
      "--json",
      json,
    ]);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/fuzzing: round \d+ done, 0 failing checks, [01] s left/);
    expect(r.err.split("\n").filter((l) => l.startsWith("fuzzing")).length).toBeLessThanOrEqual(3);
    expect(read(json).durationMs).toBeLessThan(4000 + 3000);
  });

  it("says so when the checks leave no second for a round", async () => {
    const lines: string[] = [];
    await runSuite(undefined, { rules: ["method.ping"], durationMs: 500, log: (line) => void lines.push(line) });
    expect(lines.filter((l) => l.startsWith("fuzzing"))).toEqual([
      "fuzzing: no round: the checks took all but the last second of --duration",
    ]);
  });

  it("rejects a duration it cannot read", async () => {
    expect((await cli(["--duration", "soon"])).err).toMatch(
      /--duration must be a positive time such as 500ms, 2s, 10m or 1h/,
    );
  });
});

describe("scheduling", () => {
  it("runs the checks of the rules that failed last time first, the rest in their usual order", async () => {
    const order: string[] = [];
    const recorder: Reporter = { name: "order", onCheckStart: (info) => void order.push(info.id) };
    await runSuite(undefined, { rules: ["method.ping", "wire.utf8"], first: ["wire.utf8"], reporters: [recorder] });
    const usual = allChecks.map((c) => c.id).filter((id) => order.includes(id));
    const early = usual.filter((id) => allChecks.find((c) => c.id === id)!.rules.includes("wire.utf8"));
    expect(order).toEqual([...early, ...usual.filter((id) => !early.includes(id))]);
    expect(order[0]).not.toBe(usual[0]);
  });
});

describe("--concurrency", () => {
  const dying = mutants.find((m) => m.name === "dies-on-malformed-utf8")!;
  const wireAndErrors = ["wire.*", "error.*", "method.ping", "method.auth"];

  it("gives the verdicts and cases of a serial run, also where a check kills the bridge beside the others", async () => {
    for (const make of [undefined, (token: string) => dying.create({ token })]) {
      const serial = await runSuite(make, { rules: wireAndErrors, seed: 8, concurrency: 1 });
      const pooled = await runSuite(make, { rules: wireAndErrors, seed: 8, concurrency: 4 });
      expect(verdicts(pooled)).toEqual(verdicts(serial));
    }
    const pooled = await runSuite((token) => dying.create({ token }), { rules: wireAndErrors, concurrency: 4 });
    const failing = new Set(
      pooled.rules
        .flatMap((r) => r.checks)
        .filter((c) => c.verdict === "fail")
        .map((c) => c.id),
    );
    expect(failing).toEqual(new Set(["wire.utf8/malformed"]));
  });

  it("is one at a time against a bridge that serves one connection at a time, found without waiting out a timeout", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token, singleConnection: true }), {
      rules: ["method.auth", "method.ping"],
      timeoutMs: 1000,
      concurrency: 4,
    });
    const perConnection = report.rules.flatMap((r) => r.checks).find((c) => c.id === "method.auth/per-connection")!;
    expect(perConnection).toMatchObject({ verdict: "skip" });
    expect(perConnection.message).toMatch(/one connection at a time/);
    expect(perConnection.durationMs).toBeLessThan(1000);
    expect(report.summary.fail + report.summary.error).toBe(0);
  });
});

describe("seeds", () => {
  it("are each check's own: shards merged give the verdicts and counterexamples of one serial run", async () => {
    const bridge = mutants.find((m) => m.name === "lenient-json")!.create({ token: "" });
    const { port } = await bridge.listen();
    try {
      const common = [
        "--endpoint",
        `127.0.0.1:${port}`,
        "--profile",
        "quick",
        "--seed",
        "21",
        "--rules",
        "error.*,wire.*",
      ];
      const whole = join(dir, "whole.json");
      await cli([...common, "--json", whole]);
      const parts = [1, 2, 3].map((i) => join(dir, `part${i}.json`));
      for (const [i, file] of parts.entries()) await cli([...common, "--shard", `${i + 1}/3`, "--json", file]);
      const merged = join(dir, "parts.json");
      await cli(["--merge", ...parts, "--json", merged]);
      expect(verdicts(read(merged))).toEqual(verdicts(read(whole)));
      // What crossed the wire adds up over the shards.
      expect(read(merged).wire!.lines).toBe(parts.reduce((t, f) => t + read(f).wire!.lines, 0));
      expect(read(whole).wire!.bytesSent).toBeGreaterThan(0);
      expect(read(whole).summary.fail).toBeGreaterThan(0);
    } finally {
      await bridge.close();
    }
  });
});
