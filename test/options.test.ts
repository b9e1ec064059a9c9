import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import { configJsonSchema } from "../runner/cli/options/schema.js";
import { cli, readReport } from "./helpers.js";

// Every outgoing connection of the tool goes through net.connect: record them, so a test can
// prove that a non-loopback target is refused before any socket is opened.
const dialled = vi.hoisted(() => [] as string[]);
vi.mock("node:net", async (original) => {
  const net = await original<typeof import("node:net")>();
  return {
    ...net,
    connect: (...args: Parameters<typeof net.connect>) => {
      dialled.push(String((args[0] as { host?: string }).host));
      return net.connect(...args);
    },
  };
});

const dir = mkdtempSync(join(tmpdir(), "aicc-options-"));
const config = (name: string, text: string) => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};

describe("a config file is validated, not coerced", () => {
  it.each([
    ["allow-remote", '"false"', /:2: allow-remote must be true or false, not "false"/],
    ["strict", '"no"', /:2: strict must be true or false, not "no"/],
    ["timeout", "[1]", /:2: timeout must be a positive time/],
    ["runs", "0", /:2: runs must be a positive whole number/],
  ])("%s: %s exits 2 naming the key and its line", async (key, value, message) => {
    const r = await cli(["--config", config(`${key}.yaml`, `profile: quick\n${key}: ${value}\n`)]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it("is found in the working directory without a flag", async () => {
    const cwd = process.cwd();
    const here = mkdtempSync(join(tmpdir(), "aicc-cwd-"));
    writeFileSync(join(here, "aicontrol-conformance.config.yaml"), "runs: -1\n");
    process.chdir(here);
    try {
      const r = await cli(["--list"]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/aicontrol-conformance.config.yaml:1: runs must be a positive whole number/);
    } finally {
      process.chdir(cwd);
    }
  });

  it("names the file it found, and the run lists the report files it wrote", async () => {
    const cwd = process.cwd();
    const here = mkdtempSync(join(tmpdir(), "aicc-cwd-"));
    writeFileSync(join(here, "aicontrol-conformance.config.yaml"), "profile: quick\nrules: [method.ping]\n");
    process.chdir(here);
    try {
      const r = await cli(["--json", "out.json", "--markdown", "out.md"]);
      expect(r.code, r.err).toBe(0);
      expect(r.err).toContain("options from aicontrol-conformance.config.yaml (found in the working directory)");
      expect(r.out.trimEnd().split("\n").at(-1)).toBe("reports written: out.json (json), out.md (markdown)");
    } finally {
      process.chdir(cwd);
    }
  });

  it("has a JSON Schema for editors, shipped and up to date", () => {
    const shipped = JSON.parse(readFileSync("aicontrol-conformance.config.schema.json", "utf8"));
    expect(shipped).toEqual(configJsonSchema());
  });
});

describe("a duration without a unit", () => {
  it.each([
    ["--timeout", "2"],
    ["--wait-for-endpoint", "30"],
    ["--start-timeout", "5"],
    ["--duration", "10"],
    ["--client-timeout", "1.5"],
  ])("%s %s exits 2 asking for the unit", async (flag, value) => {
    const r = await cli([flag, value, "--endpoint", "127.0.0.1:1"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${flag} ${value}: add a unit: ${value}s or ${value}ms`);
  });

  it("in a config file exits 2 naming the key and its line; with a unit it is read", async () => {
    const r = await cli(["--config", config("bare.yaml", "profile: quick\ntimeout: 2\n")]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/bare.yaml:2: timeout 2: add a unit: 2s or 2ms/);
    const json = join(dir, "unit.json");
    const ok = await cli(["--config", config("unit.yaml", `timeout: 1.5s\nrules: method.ping\njson: ${json}\n`)]);
    expect(ok.code, ok.err).toBe(0);
    expect(readReport(json).rules.find((x) => x.id.endsWith("method.ping"))!.verdict).toBe("pass");
    // The editor's schema agrees: a duration is text with a unit.
    const timeout = (configJsonSchema() as { properties: Record<string, { pattern: string }> }).properties.timeout!;
    expect(new RegExp(timeout.pattern).test("2")).toBe(false);
    expect(new RegExp(timeout.pattern).test("2s")).toBe(true);
  });
});

describe("a mistyped flag", () => {
  it.each([
    ["--endpont", "--endpoint"],
    ["--profle", "--profile"],
    ["--jsn", "--json"],
  ])("%s: says which option it means", async (typo, meant) => {
    const r = await cli([typo, "x"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`unknown option ${typo}; did you mean ${meant}?`);
    expect(r.err).not.toMatch(/positional/);
  });
});

describe("output folders", () => {
  it.each([
    ["--export", "/proc/repro"],
    ["--save-failures", "/proc/sf"],
    ["--export", "/dev/null"],
  ])("%s %s exits 2 naming the flag before connecting", async (flag, folder) => {
    dialled.length = 0;
    const started = Date.now();
    const r = await cli(["--endpoint", "127.0.0.1:1", flag, folder]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^aicontrol-conformance: ${flag} ${folder}: `));
    expect(r.err).not.toMatch(/internal error|\n\s+at /);
    expect(dialled).not.toContain("127.0.0.1");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("a folder that can be made is left for the run to make", async () => {
    const folder = join(dir, "later", "repro");
    const r = await cli(["--profile", "quick", "--rules", "method.ping", "--export", folder]);
    expect(r.code).toBe(0);
    expect(existsSync(join(dir, "later"))).toBe(false);
  });
});

describe("a remote target", () => {
  it("is refused before any connection is attempted, from a flag and from a config file", async () => {
    dialled.length = 0;
    const flag = await cli(["--endpoint", "192.0.2.7:43011"]);
    expect(flag.code).toBe(2);
    const fromConfig = await cli([
      "--config",
      config("remote.yaml", "endpoint: 10.1.2.3:43011\nallow-remote: false\n"),
    ]);
    expect(fromConfig.code).toBe(2);
    expect(fromConfig.err).toMatch(/10.1.2.3 is not a loopback address/);
    expect(dialled).toEqual([]);
  });
});

describe("report outputs", () => {
  it("are checked before connecting: an unwritable path exits 2 naming it", async () => {
    dialled.length = 0;
    const r = await cli(["--json", "/proc/no-such-dir/x.json", "--profile", "quick"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cannot write the json report to \/proc\/no-such-dir\/x.json/);
    expect(dialled).toEqual([]);
  });

  it("- means stdout: the JSON report alone on stdout, the human output on stderr", async () => {
    const r = await cli(["--json", "-", "--profile", "quick", "--rules", "method.ping"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.rules).toHaveLength(contract.rules.length);
    expect(r.err).toMatch(/rules: .* pass/);
    expect(existsSync("-")).toBe(false);
  });

  it("--report FORMAT=FILE reaches the same reporters as the format flags", async () => {
    const file = join(dir, "by-name.xml");
    const r = await cli(["--report", `junit=${file}`, "--profile", "quick", "--rules", "method.ping"]);
    expect(r.code).toBe(0);
    expect(readFileSync(file, "utf8")).toMatch(/^<\?xml/);
    expect((await cli(["--report", "pdf=x.pdf"])).err).toMatch(/--report takes FORMAT=FILE/);
  });
});

describe("selection habits", () => {
  const listed = async (...args: string[]) => {
    const r = await cli(["--list", ...args, "--json", "-"]);
    expect(r.code, r.err).toBe(0);
    return (JSON.parse(r.out) as { id: string }[]).map((x) => x.id.replace(`${contract.prefix}.`, ""));
  };

  it("globs take braces and negation: a comma inside braces does not split the list", async () => {
    expect(await listed("--rules", "wire.{utf8,ndjson},error.parse")).toEqual([
      "wire.ndjson",
      "wire.utf8",
      "error.parse",
    ]);
    const all = contract.rules.map((r) => r.id);
    const notWire = await listed("--rules", "!wire.*");
    expect(notWire).toEqual(all.filter((id) => !id.startsWith("wire.")));
    expect(await listed("--rules", "method.*,!method.a*")).toEqual(
      all.filter((id) => id.startsWith("method.") && !id.startsWith("method.a")),
    );
    expect((await cli(["--list", "--rules", "wire.{nope,nada}"])).code).toBe(2);
  });

  it("--list honours --check: an unknown check exits 2, a known one lists only its rules", async () => {
    const r = await cli(["--list", "--check", "nope/nope"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/no check named nope\/nope/);
    const one = await cli(["--list", "--check", "method.ping/ok"]);
    expect(one.code).toBe(0);
    expect(one.out.match(/^ai-control-protocol\.\S+/gm)).toEqual(["ai-control-protocol.method.ping"]);
  });

  it("a check ID given to --rules points to --check", async () => {
    const r = await cli(["--rules", "method.auth/near-miss"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--rules method.auth\/near-miss matches no rule; .*--check method.auth\/near-miss/);
    expect((await cli(["--skip", "method.auth/nera-miss"])).err).toMatch(
      /a check ID goes to --check \(did you mean method.auth\/near-miss/,
    );
  });

  it("--list honours --rules, and --list --json - prints JSON", async () => {
    const r = await cli(["--list", "--rules", "wire.*", "--json", "-"]);
    expect(r.code).toBe(0);
    const listed = JSON.parse(r.out) as { id: string; checks: { id: string }[] }[];
    expect(listed.every((x) => x.id.startsWith("ai-control-protocol.wire."))).toBe(true);
    expect(listed.length).toBe(contract.rules.filter((x) => x.group === "wire").length);
    expect(listed[0]!.checks.length).toBeGreaterThan(0);
  });

  it("--bail stops at the first failing check; the rest are skipped and the report is written", async () => {
    // A bridge that parses NaN and comments fails error.parse/non-json, and more checks come after it.
    const bridge = mutants.find((m) => m.name === "lenient-json")!.create({ token: "" });
    const { port } = await bridge.listen();
    try {
      const json = join(dir, "bail.json");
      const args = ["--endpoint", `127.0.0.1:${port}`, "--profile", "quick", "--seed", "1", "--json", json];
      const r = await cli(["--bail", ...args, "--rules", "error.*,command.*"]);
      expect(r.code).toBe(1);
      const checks = readReport(json).rules.flatMap((x) => x.checks);
      const failed = new Set(checks.filter((c) => c.verdict === "fail").map((c) => c.id));
      expect(failed.size).toBe(1);
      const stopped = checks.filter((c) => /stopped after the first failure \(--bail\)/.test(c.message));
      expect(stopped.length).toBeGreaterThan(0);
      expect(stopped.every((c) => c.verdict === "skip")).toBe(true);
      expect(stopped.some((c) => c.id.startsWith("command."))).toBe(true);
      // Said once, naming --bail, with how many checks it left: not a line per check.
      const notRun = new Set(stopped.map((c) => c.id)).size;
      expect(r.out.match(/^.*not run.*$/gm)).toEqual([
        `stopped after the first failure (--bail); ${notRun} checks not run`,
      ]);
      expect(r.out).not.toMatch(/max-failures/);
    } finally {
      await bridge.close();
    }
  });

  it("-q prints only the failures and the summary line", async () => {
    const quiet = await cli(["-q", "--profile", "quick", "--rules", "method.ping"]);
    expect(quiet.code).toBe(0);
    expect(quiet.out.trim().split("\n")).toEqual([expect.stringMatching(/^\d+ rules: 1 pass, 0 fail/)]);
    const loud = await cli(["--profile", "quick", "--rules", "method.ping"]);
    expect(loud.out.trim().split("\n").length).toBeGreaterThan(3);
  });

  it("--last-failed runs only the rules that failed in a report", async () => {
    const earlier = join(dir, "earlier.json");
    expect((await cli(["--profile", "quick", "--rules", "method.ping", "--json", earlier])).code).toBe(0);
    const report = JSON.parse(readFileSync(earlier, "utf8"));
    report.rules.find((x: { id: string }) => x.id.endsWith(".wire.utf8")).verdict = "fail";
    writeFileSync(earlier, JSON.stringify(report));
    const json = join(dir, "last-failed.json");
    const r = await cli(["--last-failed", earlier, "--profile", "quick", "--json", json]);
    expect(r.code).toBe(0);
    const run = readReport(json);
    const judged = run.rules.filter((x) => x.checks.length > 0).map((x) => x.id);
    expect(judged).toContain("ai-control-protocol.wire.utf8");
    expect(judged).not.toContain("ai-control-protocol.method.ping");
  });
});

describe("--last-failed's checks", () => {
  it("runs the checks that failed, not those of their rules that passed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aicc-lf-checks-"));
    const earlier = join(dir, "earlier.json");
    expect((await cli(["--profile", "quick", "--rules", "wire.utf8", "--json", earlier])).code).toBe(0);
    const report = JSON.parse(readFileSync(earlier, "utf8"));
    const rule = report.rules.find((x: { id: string }) => x.id.endsWith(".wire.utf8"));
    rule.verdict = "fail";
    rule.checks.find((c: { id: string }) => c.id === "wire.utf8/malformed").verdict = "fail";
    writeFileSync(earlier, JSON.stringify(report));
    const json = join(dir, "last-failed.json");
    expect((await cli(["--last-failed", earlier, "--profile", "quick", "--json", json])).code).toBe(0);
    const ran = readReport(json).rules.flatMap((x) => x.checks.filter((c) => c.verdict !== "skip").map((c) => c.id));
    expect([...new Set(ran)]).toEqual(["wire.utf8/malformed"]);
  });
});

describe("--wait-for-endpoint", () => {
  it("keeps trying a bridge that CI starts in the background; without it, the run exits 3 at once", async () => {
    const bridge = new ReferenceBridge({ port: 0 });
    const { port } = await bridge.listen();
    await bridge.close(); // the port is free now: nothing listens until the bridge comes back below
    const args = ["--endpoint", `127.0.0.1:${port}`, "--profile", "quick", "--rules", "method.ping"];
    expect((await cli(args)).code).toBe(3);
    const later = new ReferenceBridge({ port });
    const starting = new Promise((resolve) => setTimeout(resolve, 800)).then(() => later.listen());
    try {
      const r = await cli([...args, "--wait-for-endpoint", "10s"]);
      expect(r.code, r.err).toBe(0);
    } finally {
      await starting;
      await later.close();
    }
  });
});

describe("--merge", () => {
  const shardRun = async (shard: string, file: string, seed = "4") => {
    const args = ["--profile", "quick", "--rules", "method.ping,method.status", "--seed", seed];
    expect((await cli([...args, "--shard", shard, "--json", file])).code).toBe(0);
    return file;
  };

  it("takes exactly one report per shard of one split and one seed; --force does not make up for a shard", async () => {
    const [s1, s2, s1b, other] = await Promise.all([
      shardRun("1/2", join(dir, "s1.json")),
      shardRun("2/2", join(dir, "s2.json")),
      shardRun("1/3", join(dir, "s1of3.json")),
      shardRun("2/2", join(dir, "s2seed.json"), "5"),
    ]);
    // Each report says which shard it holds, and of which seed.
    expect(readReport(s1)).toMatchObject({ shard: { index: 1, count: 2 }, seed: 4 });
    const whole = join(dir, "whole.json");
    expect((await cli(["--profile", "quick", "--rules", "method.ping", "--seed", "4", "--json", whole])).code).toBe(0);
    expect(readReport(whole).shard).toBeUndefined();

    for (const [files, message] of [
      [[s1], /shard 2\/2 is missing/],
      [[s1, s1], /s1.json \(shard 1\/2\) and .*s1.json \(shard 1\/2\) are the same shard/],
      [[s1, s1b], /not shards of one split/],
      [[s1, whole], /whole.json \(a whole run\) and .*s1.json \(shard 1\/2\) are not shards of one split/],
      [[s1, other], /s2seed.json ran with seed 5, .*s1.json with seed 4/],
    ] as const) {
      const r = await cli(["--merge", ...files, "--force"]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(message);
    }
    const merged = join(dir, "merged-shards.json");
    const ok = await cli(["--merge", s2, s1, "--json", merged]);
    expect(ok.code, ok.err).toBe(0);
    expect(readReport(merged).shard).toBeUndefined();
    expect((await cli(["--merge", whole])).code).toBe(0);
  });

  it("refuses reports of different targets or contracts unless --force, and names a broken file", async () => {
    const a = await shardRun("1/2", join(dir, "a.json"));
    const b = join(dir, "b.json");
    const other = JSON.parse(readFileSync(await shardRun("2/2", b), "utf8"));
    other.contract.sha256 = "0".repeat(64);
    writeFileSync(b, JSON.stringify(other));
    const mixed = await cli(["--merge", a, b]);
    expect(mixed.code).toBe(2);
    expect(mixed.err).toMatch(/b.json has another contract/);
    expect((await cli(["--merge", a, b, "--force"])).code).toBe(0);
    const broken = join(dir, "broken.json");
    writeFileSync(broken, JSON.stringify({ schemaVersion: 1, rules: "no" }));
    const r = await cli(["--merge", a, broken]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/broken.json is not an aicontrol-conformance JSON report/);
  });
});
