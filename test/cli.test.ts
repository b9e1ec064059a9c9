import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import { EXIT_CODES, REPRODUCER_EXIT } from "../runner/cli/options/exit-codes.js";
import { usage } from "../runner/cli/options/help.js";
import { OPTIONS } from "../runner/cli/options/table.js";
import { cli, interruptedCli, readReport, TEST_TOKEN } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "aicc-cli-"));
const bridges: ReferenceBridge[] = [];
afterEach(async () => {
  while (bridges.length) await bridges.pop()!.close();
});

async function listening(bridge: ReferenceBridge): Promise<string> {
  bridges.push(bridge);
  const { port } = await bridge.listen();
  return `127.0.0.1:${port}`;
}

describe("CLI usage errors exit 2 with a clear message", () => {
  it.each([
    [["--timeout", "NaN"], /--timeout must be a positive time/],
    [["--timeout=-5"], /--timeout must be a positive time/],
    [["--timeout", "Infinity"], /--timeout must be a positive time/],
    [["--timeout", "2h"], /--timeout must be at most 1h/],
    [["--endpoint", "127.0.0.1:0"], /port from 1 to 65535/],
    [["--endpoint", "127.0.0.1:70000"], /port from 1 to 65535/],
    [["--endpoint", "nonsense"], /must be HOST:PORT/],
    [["--endpoint", "192.0.2.7:43011"], /not a loopback address: .*--allow-remote/],
    [["--rules", "wire.utf9"], /matches no rule \(did you mean wire.utf8/],
    [["--skip", "method.pong"], /matches no rule \(did you mean method.ping/],
    [["--profile", "fast"], /--profile must be one of quick, standard, thorough/],
    [["--runs", "0"], /--runs must be a positive whole number/],
    [["--token", "abc"], /unknown option --token \(tokens come only from the environment/],
    [["--token-env", "abc def"], /--token-env takes the name of an environment variable/],
    [["--endpoint", "127.0.0.1:1", "--spawn", "x"], /either --endpoint or --spawn/],
    [["--check", "no.such/check"], /no check named no.such\/check/],
    [["--config", "/nonexistent/c.yaml"], /cannot read config \/nonexistent\/c.yaml: no such file or directory/],
  ])("%j", async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("takes options from a YAML config file, with flags winning", async () => {
    const config = join(dir, "conformance.yaml");
    const json = join(dir, "from-config.json");
    writeFileSync(config, `profile: quick\nrules: [method.ping, wire.ndjson]\nseed: 21\njson: ${json}\n`);
    const r = await cli(["--config", config, "--seed", "22"]);
    expect(r.code).toBe(0);
    const report = readReport(json);
    expect(report.seed).toBe(22);
    expect(report.rules.filter((x) => x.verdict === "pass").map((x) => x.id)).toEqual([
      "ai-control-protocol.wire.ndjson",
      "ai-control-protocol.method.ping",
    ]);
  });

  it("rejects unknown keys and tokens in a config file", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "endpiont: 127.0.0.1:43011\n");
    expect((await cli(["--config", bad])).err).toMatch(/unknown option "endpiont" \(did you mean endpoint/);
    writeFileSync(bad, "token: hunter2\n");
    const r = await cli(["--config", bad]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/a token is never read from a file/);
  });
});

describe("CLI against a target", () => {
  it("exits 3 and still writes a report when nothing listens", async () => {
    const json = join(dir, "unreachable.json");
    const r = await cli(["--endpoint", "127.0.0.1:1", "--json", json]);
    expect(r.code).toBe(3);
    // Said once, as the cause of every verdict.
    expect((r.out + r.err).match(/target unreachable: cannot connect to 127.0.0.1:1/g)).toHaveLength(1);
    // The cause first, then the count: no table of `error` rows (it is in the report, and under -v).
    const lines = r.out.trim().split("\n");
    expect(lines[0]).toMatch(/^No check could be judged: target unreachable: cannot connect to 127.0.0.1:1/);
    expect(lines.length + r.err.trim().split("\n").length).toBeLessThanOrEqual(10);
    expect(r.out).not.toMatch(/ERROR {2}ai-control-protocol/);
    const verbose = await cli(["--endpoint", "127.0.0.1:1", "-v"]);
    expect(verbose.out).toMatch(/ERROR ai-control-protocol.method.ping/);
    const report = readReport(json);
    expect(report.rules).toHaveLength(contract.rules.length);
    expect(report.rules.find((x) => x.id.endsWith("method.ping"))!.verdict).toBe("error");
  });

  it("writes a schemaVersion 1 report with every rule of the contract and exits 0 for a conformant bridge", async () => {
    const endpoint = await listening(new ReferenceBridge({ token: TEST_TOKEN }));
    const json = join(dir, "ok.json");
    const r = await cli(
      ["--endpoint", endpoint, "--token-env", "MY_TOKEN", "--profile", "quick", "--json", json, "--seed", "7"],
      { MY_TOKEN: TEST_TOKEN },
    );
    expect(r.code).toBe(0);
    const report = readReport(json);
    expect(report).toMatchObject({
      schemaVersion: 1,
      tool: { name: "aicontrol-conformance" },
      target: { endpoint, spawned: false },
      seed: 7,
    });
    expect(report.rules).toHaveLength(contract.rules.length);
    for (const rule of report.rules) expect(["pass", "skip", "warn"]).toContain(rule.verdict);
    expect(r.out).toContain("ai-control-protocol.wire.ndjson");
  });

  it("exits 1 for a broken bridge, with the counterexample and a replay command that reproduces it", async () => {
    const broken = mutants.find((m) => m.name === "lenient-json")!;
    const endpoint = await listening(broken.create({ token: TEST_TOKEN }));
    const json = join(dir, "broken.json");
    const env = { FONLINE_AI_TOKEN: TEST_TOKEN };
    const r = await cli(["--endpoint", endpoint, "--profile", "quick", "--rules", "error.*", "--json", json], env);
    expect(r.code).toBe(1);
    const report = readReport(json);
    const rule = report.rules.find((x) => x.id.endsWith("error.parse"))!;
    expect(rule.verdict).toBe("fail");
    const check = rule.checks.find((c) => c.id === "error.parse/non-json")!;
    expect(check.verdict).toBe("fail");
    expect(check.counterexample).toMatch(/nan-infinity|trailing-comma|comment/);
    expect(check.transcript?.some((e) => e.dir === "send")).toBe(true);
    expect(check.replay).toMatch(/--check error.parse\/non-json --seed \d+ --path \S+/);

    const replay = await cli(["--endpoint", endpoint, "--replay", json], env);
    expect(replay.code).toBe(1);
    expect(replay.out).toContain("STILL FAILING error.parse/non-json");
    const args = check.replay!.split(" ").slice(2);
    const single = await cli(args, env);
    expect(single.code).toBe(1);
    expect(single.out).toContain("STILL FAILING error.parse/non-json");

    // Without a target flag, the replay goes to the endpoint the report recorded, and says so.
    const recorded = await cli(["--replay", json], env);
    expect(recorded.err).toContain(`replaying against the report's target: --endpoint ${endpoint}`);
    expect(recorded.out).toContain("STILL FAILING error.parse/non-json");
    expect(recorded.out).toMatch(/case: +\{"kind":/);
    expect(recorded.code).toBe(1);
    expect(readReport(json).seed).toBe(report.seed);

    // Fixed: the same report replayed against a conformant bridge, named as another target.
    const fixed = await listening(new ReferenceBridge({ token: TEST_TOKEN }));
    const again = await cli(["--endpoint", fixed, "--replay", json], env);
    expect(again.err).toContain(`replaying against --endpoint ${fixed}; the report was of --endpoint ${endpoint}`);
    expect(again.out).toContain("FIXED error.parse/non-json");
    expect(again.code).toBe(0);

    // The bridge that failed is gone: nothing can be claimed about it.
    await bridges.shift()!.close();
    const gone = await cli(["--replay", json, "--json", join(dir, "gone.json")], env);
    expect(gone.code).toBe(3);
    expect(gone.out).toContain("COULD NOT REPLAY error.parse/non-json");
    expect(gone.out).not.toContain("FIXED");
    expect(readReport(join(dir, "gone.json")).seed).toBe(report.seed);
  });

  it("reaches a bridge on IPv6 loopback as [::1]:PORT", async () => {
    const bridge = new ReferenceBridge({ token: TEST_TOKEN, host: "::1" });
    bridges.push(bridge);
    const { port } = await bridge.listen();
    const r = await cli(["--endpoint", `[::1]:${port}`, "--profile", "quick", "--rules", "method.ping,wire.ndjson"], {
      FONLINE_AI_TOKEN: TEST_TOKEN,
    });
    expect(r.code).toBe(0);
    expect(r.out).toContain(`bridge at [::1]:${port}`);
  });

  it("says to set --token-env when the bridge wants a token none was given for", async () => {
    const endpoint = await listening(new ReferenceBridge({ token: TEST_TOKEN }));
    const r = await cli(["--endpoint", endpoint, "--profile", "quick"]);
    expect(r.code).toBe(3);
    // Said once, as the root cause, not once per check: first, in a few lines.
    expect(r.out.match(/requires a token .* --token-env/g)).toHaveLength(1);
    const lines = r.out.trim().split("\n");
    expect(lines[0]).toMatch(/requires a token .* --token-env/);
    expect(lines.length).toBeLessThanOrEqual(10);
  });

  it("never prints the token, even when the bridge echoes it back", async () => {
    class Echoing extends ReferenceBridge {
      protected override ping() {
        return { ok: false, echoed: this.options.token };
      }
    }
    const endpoint = await listening(new Echoing({ token: TEST_TOKEN }));
    const json = join(dir, "echo.json");
    const r = await cli(
      ["--endpoint", endpoint, "--profile", "quick", "--rules", "method.ping", "--json", json, "--verbose"],
      { FONLINE_AI_TOKEN: TEST_TOKEN },
    );
    expect(r.code).toBe(1);
    expect(r.out + r.err).not.toContain(TEST_TOKEN);
    const text = readFileSync(json, "utf8");
    expect(text).toContain("«redacted»");
    expect(text).not.toContain(TEST_TOKEN);
  });

  it("never prints the token when it appears in a spawn command", async () => {
    const json = join(dir, "spawn-token.json");
    const r = await cli(
      [
        "--spawn",
        `node dist/bridges/reference/cli.js --host 127.0.0.1 # ${TEST_TOKEN}`,
        "--profile",
        "quick",
        "--rules",
        "method.ping",
        "--json",
        json,
      ],
      { ...process.env, FONLINE_AI_TOKEN: TEST_TOKEN },
    );
    expect(r.code).toBe(0);
    expect(r.out + r.err + readFileSync(json, "utf8")).not.toContain(TEST_TOKEN);
    expect(r.out).toContain("«redacted»");
  });

  it("lists every rule with how it is observed and its checks", async () => {
    const r = await cli(["--list"]);
    expect(r.code).toBe(0);
    expect(r.out.match(/^ai-control-protocol\./gm)).toHaveLength(contract.rules.length);
    expect(r.out).toMatch(/ai-control-protocol.security.shipping-build {2}\[SHOULD, none\]/);
  });

  it("runs the built-in reference bridge when no target is given", async () => {
    const json = join(dir, "builtin.json");
    const r = await cli(["--profile", "quick", "--rules", "method.*,error.unauthorized", "--json", json]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/built-in reference bridge on 127\.0\.0\.1:\d+/);
    const report = readReport(json);
    expect(report.target.spawned).toBe(true);
    expect(report.rules.find((x) => x.id.endsWith("error.unauthorized"))!.verdict).toBe("pass");
  });
});

describe("CLI interrupted", () => {
  it("on Ctrl-C stops the check under way, records it as interrupted, writes the report and exits 130", async () => {
    const json = join(dir, "interrupted.json");
    // A check that runs for seconds (the deep session at thorough), then one more: Ctrl-C comes while the first runs.
    const args = [
      "--profile",
      "thorough",
      "--check",
      "validation.protocol-smoke/deep-states",
      "--check",
      "method.ping/ok",
    ];
    // The run has started its checks: one Ctrl-C, a moment into the first (which runs for seconds more).
    const { code, out } = await interruptedCli([...args, "--json", json], "profile thorough", 1000);
    expect(code).toBe(130);
    const report = readReport(json);
    expect(report.interrupted).toBe(true);
    const checks = report.rules.flatMap((r) => r.checks);
    const cut = checks.find((c) => c.id === "validation.protocol-smoke/deep-states")!;
    expect(cut).toMatchObject({ verdict: "skip", interrupted: true });
    expect(cut.message).toMatch(/^interrupted: the run was stopped/);
    expect(checks.find((c) => c.id === "method.ping/ok")?.verdict).toBe("pass");
    expect(out).toMatch(
      /The run was interrupted: validation.protocol-smoke\/deep-states was stopped while it ran \(interrupted, skip\); 0 checks did not run/,
    );
  });
});

describe("CLI --spawn", () => {
  const bridgeCli = "node dist/bridges/reference/cli.js";

  it("starts the bridge, reads its port from its ready line, and stops it", async () => {
    const json = join(dir, "spawned.json");
    const r = await cli(
      ["--spawn", `${bridgeCli} --single-connection`, "--profile", "quick", "--rules", "wire.*", "--json", json],
      { ...process.env, FONLINE_AI_TOKEN: TEST_TOKEN },
    );
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const report = readReport(json);
    expect(report.target.spawned).toBe(true);
    expect(report.rules.find((x) => x.id.endsWith("wire.utf8"))!.verdict).toBe("pass");
  });

  it("restarts a spawned bridge that a check killed, so the run goes on", async () => {
    const json = join(dir, "dies.json");
    const r = await cli(
      [
        "--spawn",
        `${bridgeCli} --mutant dies-on-malformed-utf8`,
        "--profile",
        "quick",
        "--rules",
        "wire.utf8,method.ping",
        "--json",
        json,
      ],
      { ...process.env },
    );
    expect(r.code).toBe(1);
    const report = readReport(json);
    const utf8 = report.rules.find((x) => x.id.endsWith("wire.utf8"))!;
    expect(utf8.verdict).toBe("fail");
    expect(utf8.checks.find((c) => c.verdict === "fail")!.message).toMatch(/stopped answering|stopped accepting/);
    expect(report.rules.find((x) => x.id.endsWith("method.ping"))!.verdict).toBe("pass");
  });

  it("shrinks a game loop that dies on one ill-typed field to the minimal command, restarting the bridge per attempt, and replays it", async () => {
    const spawn = `${bridgeCli} --mutant drain-dies-on-ill-typed --drain-ms 2`;
    const json = join(dir, "drain.json");
    const env = { ...process.env, FONLINE_AI_TOKEN: TEST_TOKEN };
    const r = await cli(
      ["--spawn", spawn, "--rules", "command.y", "--seed", "9", "--timeout", "500ms", "--json", json],
      env,
    );
    expect(r.code).toBe(1);
    const check = readReport(json)
      .rules.flatMap((x) => x.checks)
      .find((c) => c.id.endsWith("/typed") && c.verdict === "fail")!;
    const minimal = JSON.parse(check.counterexample!) as Record<string, unknown>;
    expect(Object.keys(minimal)).toHaveLength(2);
    expect(check.replay).toContain(`--spawn '${spawn}'`);
    const replay = await cli(
      [
        "--spawn",
        spawn,
        "--timeout",
        "500ms",
        "--check",
        check.id,
        "--seed",
        String(check.seed),
        "--path",
        check.path!,
      ],
      env,
    );
    expect(replay.out).toContain(`STILL FAILING ${check.id}`);
    expect(replay.out).not.toContain("FIXED");
  });

  it("replays a stateful session's failure exactly: the same commands, from the report and from the printed command", async () => {
    const spawn = `${bridgeCli} --mutant status-revokes-auth`;
    const json = join(dir, "stateful.json");
    const env = { ...process.env, FONLINE_AI_TOKEN: TEST_TOKEN };
    const r = await cli(["--spawn", spawn, "--rules", "validation.protocol-smoke", "--seed", "5", "--json", json], env);
    expect(r.code).toBe(1);
    const check = readReport(json)
      .rules.flatMap((x) => x.checks)
      .find((c) => c.id === "validation.protocol-smoke/stateful")!;
    expect(check.verdict).toBe("fail");
    expect(check.replayPath).toMatch(/\S/);
    expect(check.replay).toContain(`--replay-path ${check.replayPath}`);
    // The report's own spawn command is started again when no target is given.
    const fromReport = await cli(["--replay", json], env);
    expect(fromReport.err).toContain(`replaying against the report's target: --spawn ${spawn}`);
    expect(fromReport.out).toContain(`STILL FAILING ${check.id}`);
    expect(fromReport.out).toMatch(/before: .*\n\s+now: /);
    // The printed command as a shell reads it (single quotes), without the program name.
    const words = [...check.replay!.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) =>
      m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!,
    );
    expect(words.slice(0, 2)).toEqual(["npx", "aicontrol-conformance"]);
    const fromCommand = await cli(words.slice(2), env);
    expect(fromCommand.out).toContain(`STILL FAILING ${check.id}`);
    // The same case against a conformant bridge is fixed; a case that cannot be replayed says so.
    const fixed = await cli(["--spawn", bridgeCli, "--replay", json], env);
    expect(fixed.out).toContain(`FIXED ${check.id}`);
    const wrong = await cli(
      ["--spawn", spawn, "--check", check.id, "--seed", String(check.seed), "--path", "999:999:999"],
      env,
    );
    expect(wrong.out).toContain(`COULD NOT REPLAY ${check.id}`);
    expect(wrong.out).not.toContain("FIXED");
  });

  it("exits 3 with the bridge's stderr when it dies before its ready line", async () => {
    const r = await cli([
      "--spawn",
      `node -e "console.error('boom: no config'); process.exit(4)"`,
      "--json",
      join(dir, "dead.json"),
    ]);
    expect(r.code).toBe(3);
    // Said once, as the cause of every verdict.
    expect(r.out + r.err).toMatch(/exited \(code 4\) before printing its ready line[\s\S]*boom: no config/);
    expect((r.out + r.err).match(/boom: no config/g)).toHaveLength(1);
    expect(existsSync(join(dir, "dead.json"))).toBe(true);
  });

  it("keeps the bridge's stderr that is read only after its exit is seen", async () => {
    // The shell exits at once; what it started writes the reason a moment later, on the same pipe.
    const r = await cli(["--spawn", `sh -c '(sleep 0.3; echo boom: written late >&2) & exit 4'`]);
    expect(r.code).toBe(3);
    expect(r.out + r.err).toMatch(/exited \(code 4\) before printing its ready line[\s\S]*boom: written late/);
  });

  it("exits 3 when the bridge stays silent", async () => {
    const r = await cli(["--spawn", `node -e "setInterval(() => {}, 1000)"`, "--start-timeout", "300ms"], {});
    expect(r.code).toBe(3);
    expect(r.out + r.err).toMatch(/printed no ready line .* within 300 ms/);
  });
});

describe("CLI output to a reader that goes away", () => {
  /** Processes whose command line holds `mark`: what a run left behind. */
  const running = (mark: string) =>
    readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(mark);
        } catch {
          return false;
        }
      });

  it.skipIf(process.platform !== "linux")(
    "ends quietly with the run's exit code and stops the bridge it started (… | head -2)",
    async () => {
      const mark = `AICC_EPIPE_${process.pid}`;
      const json = join(dir, "epipe.json");
      const args = ["--spawn", `node dist/bridges/reference/cli.js --token-env ${mark}`, "--profile", "quick"];
      const child = spawn(process.execPath, ["dist/bin.js", ...args, "--rules", "wire.*,method.*", "--json", json], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      child.stderr.on("data", (d: Buffer) => {
        err += d.toString();
      });
      // The reader takes the first lines and closes its end, as `head -2` does.
      child.stdout.once("data", () => child.stdout.destroy());
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      expect(err).not.toMatch(/EPIPE|internal error|\n\s+at /);
      expect(code).toBe(0);
      expect(readReport(json).summary.fail).toBe(0);
      expect(running(mark)).toEqual([]);
    },
  );
});

describe("CLI help and docs for installed users", () => {
  const readme = readFileSync("README.md", "utf8");
  // The CLI reference and the reproducers' page: where the README sends a reader for every option and code.
  const reference = readFileSync("docs/cli.md", "utf8");
  const reproducing = readFileSync("docs/reproducing.md", "utf8");

  it("--help names every way to run it and every exit code, 130 included", async () => {
    const r = await cli(["--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ {7}aicontrol-conformance client --exec /m);
    expect(r.out).toMatch(/^ {7}aicontrol-conformance --merge /m);
    for (const [code, meaning] of EXIT_CODES) expect(r.out).toContain(`  ${String(code).padEnd(4)} ${meaning}`);
    expect(r.out).toMatch(/^ {2}130 +interrupted/m);
    expect(r.out).toMatch(/--compare .*exits 1 when a rule got worse/);
  });

  it("the CLI reference, --help and the config schema come from one option table", () => {
    const help = usage();
    for (const [name, spec] of Object.entries(OPTIONS)) {
      expect(help, name).toContain(`--${name}`);
      if (["exec", "client-timeout", "path", "replay-path", "help", "version", "report", "force"].includes(name))
        continue;
      if (!("cliOnly" in spec) || name === "config") expect(reference, name).toContain(`--${name}`);
    }
    for (const [code, meaning] of EXIT_CODES) expect(reference).toContain(`- \`${code}\` ${meaning}`);
    // A reproducer's exit codes: the same in --help and in docs/reproducing.md.
    const exportHelp = help.split("\n").find((l) => l.includes("--export DIR"))!;
    const section = reproducing.slice(reproducing.indexOf("`--export DIR` writes"));
    const inReadme = [...section.slice(0, section.indexOf("\n\n")).matchAll(/`(\d)` when/g)].map((m) => Number(m[1]));
    expect(inReadme.sort()).toEqual(REPRODUCER_EXIT.map(([code]) => code));
    for (const [code] of REPRODUCER_EXIT) expect(exportHelp).toContain(`${code}: `);
  });

  it("the README's first block runs from a clone and from the installed package", () => {
    const head = readme.slice(0, readme.indexOf("## Point it at your bridge"));
    for (const command of [
      "npm ci && npm start",
      "npm test",
      "npm install --save-dev aicontrol-conformance",
      'npx aicontrol-conformance --spawn "python3 my_bridge.py --port 0"',
    ])
      expect(head).toContain(command);
  });

  it("ships every file the README points installed users at", () => {
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { encoding: "utf8" }),
    ) as {
      files: { path: string }[];
    }[];
    const files = packed[0]!.files.map((f) => f.path);
    // The docs the README links to, and the files that they and the README name in an installed package.
    const docs = [...readme.matchAll(/\]\((docs\/[\w.-]+\.md)(?:#[\w-]*)?\)/g)].map((m) => m[1]!);
    expect(docs).toEqual(
      expect.arrayContaining(["docs/cli.md", "docs/verdicts.md", "docs/reproducing.md", "docs/ci.md"]),
    );
    for (const doc of docs) expect(files, doc).toContain(doc);
    const texts = [readme, ...docs.map((doc) => readFileSync(doc, "utf8"))].join("\n");
    const pointed = [...texts.matchAll(/node_modules\/aicontrol-conformance\/(\S+?\.(?:py|json))/g)].map((m) => m[1]!);
    expect(pointed).toContain("bench/client.py");
    expect(pointed).toContain("aicontrol-conformance.config.schema.json");
    for (const file of pointed) expect(files, file).toContain(file);
  });
});

describe("CLI tables", () => {
  it("print no group header without a rule under it: a --check run and a client run", async () => {
    const checked = await cli(["--check", "method.ping/ok", "--profile", "quick"]);
    expect(checked.code).toBe(0);
    expect(checked.out).toMatch(/^method\n {2}PASS {2}ai-control-protocol.method.ping/m);
    expect(checked.out).not.toMatch(/^(security|integration|validation|wire)$/m);
    const client = await cli([
      "client",
      "--exec",
      "node dist/bridges/clients/reference.js --host {host} --port {port} --timeout {timeout} ping",
      "--rules",
      "wire.ndjson,integration.*",
      "--profile",
      "quick",
    ]);
    expect(client.code, client.err).toBe(0);
    expect(client.out).toMatch(/^wire$/m);
    expect(client.out).not.toMatch(/^integration$/m);
    expect(client.out).not.toContain("a bridge's duty");
    expect(client.out).toMatch(/^ {2}\d+ rule\(s\) binding only bridges, not judged in client mode/m);
  });
});
