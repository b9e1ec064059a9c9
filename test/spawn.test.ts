import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { contract } from "../protocol/contract.js";
import { spawnTarget } from "../runner/targets.js";
import { watchLoop } from "../runner/watch.js";
import { Harness } from "../suites/harness/harness.js";
import { cli, readReport, TEST_TOKEN, until } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "aicc-spawn-"));
const bridgeCli = `${process.execPath} dist/bridges/reference/cli.js`;

/** Processes whose command line holds `marker`. */
const processesWith = (marker: string) =>
  execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(marker) && !line.includes("ps -eo"));

describe("the reference bridge's command line", () => {
  it("names a bad option and prints its usage, exit 2, without a stack trace; --help prints the usage", () => {
    const run = (...args: string[]) => {
      try {
        return {
          code: 0,
          out: execFileSync(process.execPath, ["dist/bridges/reference/cli.js", ...args], {
            encoding: "utf8",
            stdio: "pipe",
          }),
        };
      } catch (err) {
        const e = err as { status: number; stderr: string };
        return { code: e.status, out: e.stderr };
      }
    };
    const unknown = run("--drain", "5");
    expect(unknown.code).toBe(2);
    expect(unknown.out).toMatch(/^reference bridge: Unknown option '--drain'/);
    expect(unknown.out).toContain("usage: cli.js");
    expect(unknown.out).not.toMatch(/\n\s+at /);
    expect(run("--drain-ms", "0")).toMatchObject({
      code: 2,
      out: expect.stringMatching(/--drain-ms must be a whole number >= 1/),
    });
    expect(run("--help")).toMatchObject({ code: 0, out: expect.stringMatching(/^usage: cli.js/) });
  });
});

describe("a spawned bridge", () => {
  it("that dies mid-run is reported once, with how it ended and its last stderr lines", async () => {
    const json = join(dir, "died.json");
    // Its last words include the token: shown to the user, they must be redacted like everything else.
    const spawnCmd = `${bridgeCli} --mutant dies-on-malformed-utf8; echo "bridge said goodbye, token $FONLINE_AI_TOKEN" >&2`;
    const r = await cli(
      ["--spawn", spawnCmd, "--profile", "quick", "--rules", "wire.utf8,method.ping", "--json", json],
      { ...process.env, FONLINE_AI_TOKEN: TEST_TOKEN },
    );
    expect(r.out + r.err).not.toContain(TEST_TOKEN);
    expect(r.out).toContain("bridge said goodbye, token «redacted»");
    expect(r.code).toBe(1);
    const report = readReport(json);
    expect(report.targetExits?.[0]).toMatchObject({ check: "wire.utf8/malformed", exit: "code 0" });
    expect(report.targetExits?.[0]?.stderr).toContain("bridge said goodbye");
    expect((r.out + r.err).match(/spawned bridge exited \(code 0\) during wire.utf8\/malformed/gi)).toHaveLength(1);
  });

  it("at the smallest legal limits: the CLI exits once its report is written, and no bridge process outlives it", async () => {
    const marker = "--drain-ms 7";
    const json = join(dir, "small.json");
    const child = spawn(
      process.execPath,
      [
        "dist/bin.js",
        "--spawn",
        `${bridgeCli} --max-commands 1 --max-events 1 ${marker}`,
        "--profile",
        "quick",
        "--json",
        json,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code, out.slice(-2000)).toBe(0);
    const report = readReport(json);
    expect(report.summary.fail + report.summary.error).toBe(0);
    expect(processesWith(marker)).toEqual([]);
    // And the port it served on is closed.
    const port = Number(/on 127\.0\.0\.1:(\d+)/.exec(report.target.label ?? "")?.[1]);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(false);
      });
      socket.on("error", () => resolve(true));
    });
    expect(refused).toBe(true);
  }, 120_000);
});

describe("a spawned bridge asked to restart", () => {
  it("is kept while nothing has connected to it since it started, unless forced", async () => {
    const target = await spawnTarget(bridgeCli, { startTimeoutMs: 10_000 });
    onTestFinished(() => target.stop());
    await target.restart!();
    expect(target.restarts).toBe(0);
    const harness = new Harness({
      contract,
      endpoint: target,
      timeoutMs: 1000,
      runs: 1,
      timeBudgetMs: 1000,
      seed: 1,
      deadline: Date.now() + 10_000,
    });
    await harness.connect();
    harness.stop();
    expect(target.fresh).toBe(false);
    // One caller after another wants a fresh bridge: one start serves them all.
    await target.restart!();
    await target.restart!();
    expect(target.restarts).toBe(1);
    await target.restart!({ force: true });
    expect(target.restarts).toBe(2);
  });

  it("leaves no bridge behind when the run ends in the middle of restarts, spares started ahead included", async () => {
    const mark = `AICC_SPARES_${process.pid}`;
    const target = await spawnTarget(`${bridgeCli} --token-env ${mark}`, { startTimeoutMs: 10_000 });
    // The second restart starts bridges ahead of the next; the third is under way when the run ends.
    await target.restart!({ force: true });
    await target.restart!({ force: true });
    const underWay = target.restart!({ force: true }).catch(() => undefined);
    await target.stop();
    await underWay;
    await expect(target.restart!({ force: true })).rejects.toThrow(/the run has ended/);
    expect(processesWith(mark)).toEqual([]);
  });

  it("is stopped whole: its stop ends once the bridge is gone, not the shell that started it", async () => {
    const mark = `AICC_SHELL_${process.pid}`;
    // The shell stays (a command follows the bridge), and the bridge takes a moment to end on SIGTERM.
    const bridge = `process.on("SIGTERM", () => setTimeout(() => process.exit(0), 300)); require("node:net").createServer().listen(0, "127.0.0.1", function () { console.log(JSON.stringify({ port: this.address().port })); })`;
    const target = await spawnTarget(`${process.execPath} -e '${bridge}' ${mark}; true`, { startTimeoutMs: 10_000 });
    expect(processesWith(mark).length).toBeGreaterThan(0);
    await target.stop();
    expect(processesWith(mark)).toEqual([]);
  });

  it("is started again when it exited on its own, though nothing connected to it", async () => {
    const target = await spawnTarget(
      `${process.execPath} -e 'console.log(JSON.stringify({ port: 9 })); setTimeout(() => {}, 50)'`,
      { startTimeoutMs: 10_000 },
    );
    onTestFinished(() => target.stop());
    await until(
      () => target.exited?.() === true,
      () => "the bridge did not exit",
    );
    await target.restart!();
    expect(target.restarts).toBe(1);
  });
});

describe("--watch", () => {
  it("runs, waits for a change under the folder, runs again against a fresh bridge, and stops on Ctrl-C", async () => {
    const watched = mkdtempSync(join(tmpdir(), "aicc-watch-"));
    const marker = "--drain-ms 9";
    const json = join(watched, "report.json"); // its own report is written inside: that is not an edit
    const child = spawn(
      process.execPath,
      [
        "dist/bin.js",
        "--watch",
        watched,
        "--spawn",
        `${bridgeCli} ${marker}`,
        "--rules",
        "method.ping",
        "--json",
        json,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let err = "";
    // A wait that fails says what the CLI had said so far, rather than timing the test out.
    const seen = (pattern: RegExp, times = 1) =>
      until(
        () => (err.match(new RegExp(pattern, "g")) ?? []).length >= times,
        () => `no ${pattern} (x${times}) in what the CLI said:\n${err}`,
        20_000,
      );
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.stdout.resume();
    // However the test ends, the watching CLI does not outlive it.
    onTestFinished(async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGINT"); // it stops its bridge and exits; a hung one is killed
      const exited = new Promise((resolve) => child.once("exit", resolve));
      if (!(await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 5000))])))
        child.kill("SIGKILL");
    });
    await seen(/watching /);
    writeFileSync(join(watched, "bridge.py"), "# edited\n");
    await seen(/bridge\.py changed: restarting the bridge and running again/);
    await seen(/watching /, 2);
    expect(readReport(json).summary.fail).toBe(0);
    // Each run stops the bridge it started (the watching CLI's own command line holds the marker too).
    expect(processesWith(marker).filter((line) => !line.includes("dist/bin.js"))).toEqual([]);
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(0);
    expect(err.match(/changed: restarting/g)).toHaveLength(1);
  }, 60_000);

  it("does not miss an edit made the moment it says it is watching", async () => {
    const watched = mkdtempSync(join(tmpdir(), "aicc-watch-"));
    const stop = new AbortController();
    const said: string[] = [];
    let runs = 0;
    // Whoever waits for "watching" before editing (a user, a script) edits while the watcher may still be starting.
    const say = (line: string) => {
      said.push(line);
      if (!line.startsWith("watching ")) return;
      if (runs === 1) writeFileSync(join(watched, "bridge.py"), "# edited\n");
      else stop.abort();
    };
    const giveUp = setTimeout(() => stop.abort(), 5000);
    await watchLoop(async () => ({ code: runs++ }), { dir: watched, ownFiles: [], signal: stop.signal, say });
    clearTimeout(giveUp);
    expect(said.filter((l) => l.includes("changed: restarting"))).toEqual([
      "bridge.py changed: restarting the bridge and running again",
    ]);
    expect(runs).toBe(2);
  });

  it("needs --spawn and a folder that exists", async () => {
    expect((await cli(["--watch", "."])).err).toMatch(/--watch restarts a bridge it starts itself/);
    const r = await cli(["--watch", "/no/such/folder", "--spawn", "true"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--watch \/no\/such\/folder: no such folder/);
  });
});
