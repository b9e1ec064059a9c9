import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clientMutants } from "../bridges/clients/mutants.js";
import { contract } from "../protocol/contract.js";
import type { Report } from "../reports/types.js";
import { clientUnstarted } from "../runner/client.js";
import { BRIDGE_DUTY, clientChecks } from "../suites/client/index.js";
import { NEEDS_OUTCOME } from "../suites/client/judge.js";
import { cli, problems, readReport, runClientSuite, verdictOf } from "./helpers.js";

// The compiled reference client (the global setup builds it), started once per case.
// It authorizes every connection with the token in the contract's token variable, where set, and reconnects once.
const CLIENT =
  "node dist/bridges/clients/reference.js --host {host} --port {port} --timeout {timeout} --token-env FONLINE_AI_TOKEN --retries 1";
// A conformant client written apart from this code base, in the standard library of Python 3.
const PYTHON_CLIENT = "python3 bench/client.py --host {host} --port {port} --timeout {timeout} ping";
const hasPython = spawnSync("python3", ["--version"]).status === 0;

async function runClient(command: string, checks?: string[], runs = 100): Promise<Report> {
  return runClientSuite(command, {
    runs,
    // One quieter try of a failure: each try of a client that never ends costs its whole deadline.
    recheck: 1,
    ...(checks ? { onlyChecks: new Set(checks) } : {}),
  });
}

/** Paging is observed only of a client that reads events: asked to ping, that check skips. */
const FOLLOW_SKIPS_PING = ["method.events/follow-pages", "skip", "the client command does not read events"];
const checksOf = (rule: Report["rules"][number]) => rule.checks.map((c) => [c.id, c.verdict, c.message]);

const checkVerdict = (report: Report, rule: string, check: string) =>
  report.rules.find((r) => r.id === `${contract.prefix}.${rule}`)?.checks.find((c) => c.id === check)?.verdict;

describe("client mode against the reference client", () => {
  it("passes every case and lists every rule", async () => {
    const dir = mkdtempSync(join(tmpdir(), "client-"));
    const { code, out } = await cli([
      "client",
      "--exec",
      `${CLIENT} ping`,
      "--seed",
      "3",
      "--json",
      join(dir, "r.json"),
      "--junit",
      join(dir, "r.xml"),
    ]);
    const report = readReport(join(dir, "r.json"));
    expect(problems(report), out).toEqual([]);
    expect(code).toBe(0);
    expect(report.summary.warn).toBe(0);
    expect(report.target).toEqual({ kind: "client", command: `${CLIENT} ping`, spawned: true, label: "client" });
    expect(report.rules).toHaveLength(contract.rules.length);
    // Every check ran and passed; every rule without a client check is a skip with its reason.
    const ran = report.rules.flatMap((r) => r.checks.map((c) => c.id));
    expect(new Set(ran)).toEqual(new Set(clientChecks.map((c) => c.id)));
    for (const rule of report.rules) {
      if (rule.id.endsWith(".method.events")) expect(checksOf(rule), rule.id).toEqual([FOLLOW_SKIPS_PING]);
      else if (rule.checks.length) expect(rule.verdict, rule.id).toBe("pass");
      else expect(rule.verdict, rule.id).toBe("skip");
    }
    expect(report.rules.find((r) => r.id.endsWith(".method.ping"))?.reason).toBe(BRIDGE_DUTY);
    expect(verdictOf(report, "validation.malformed-peer")).toBe("pass");
    expect(verdictOf(report, "security.loopback-default")).toBe("pass");
    expect(verdictOf(report, "validation.finite-timeout")).toBe("pass");
  }, 120_000);

  it("skips the remote-error cases of a client that prints no outcome line", async () => {
    const quiet = `bash -c 'set -o pipefail; ${CLIENT} ping | grep -v AICONTROL_OUTCOME'`;
    const report = await runClient(quiet, ["wire.response-envelope/valid-errors", "validation.malformed-peer/id"], 20);
    const errors = report.rules
      .find((r) => r.id.endsWith(".wire.response-envelope"))
      ?.checks.find((c) => c.id === "wire.response-envelope/valid-errors");
    expect(errors?.verdict).toBe("skip");
    expect(errors?.message).toBe(NEEDS_OUTCOME);
    expect(errors?.reasonKind).toBe("not-observable");
    // Rejections are still told by the exit status.
    expect(checkVerdict(report, "validation.malformed-peer", "validation.malformed-peer/id")).toBe("pass");
  }, 60_000);

  it("kills a client still running at the deadline, with every process it started", async () => {
    const marker = "37.25";
    // Connects (bash's /dev/tcp), sends a request, then waits in two processes, one in the background.
    const hang = `bash -c 'exec 3<>/dev/tcp/{host}/{port}; echo "{}" >&3; sleep ${marker} & sleep ${marker}'`;
    const report = await runClient(hang, ["validation.finite-timeout/silence"]);
    const check = report.rules.flatMap((r) => r.checks).find((c) => c.id === "validation.finite-timeout/silence");
    expect(check?.verdict).toBe("fail");
    expect(check?.message).toMatch(/still running/);
    const left = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })
      .split("\n")
      .filter((l) => l.includes(`sleep ${marker}`));
    expect(left).toEqual([]);
  }, 30_000);

  it("grades a failure that a quieter try does not reproduce as such, never a plain failure", async () => {
    // The second start (the first is the preflight's) hangs after its request; every other is the reference client.
    const count = join(mkdtempSync(join(tmpdir(), "client-")), "starts");
    const once = `bash -c 'n=$(( $(cat ${count} 2>/dev/null || echo 0) + 1 )); echo $n > ${count}; if [ $n = 2 ]; then exec 3<>/dev/tcp/{host}/{port}; echo "{}" >&3; sleep 30; else exec ${CLIENT} ping; fi'`;
    const report = await runClient(once, ["validation.finite-timeout/silence"]);
    const check = checkVerdict(report, "validation.finite-timeout", "validation.finite-timeout/silence");
    const silence = report.rules.flatMap((r) => r.checks).find((c) => c.id === "validation.finite-timeout/silence");
    expect(check).toBe("warn");
    expect(silence?.reproduced).toEqual({ tries: 1, failed: 0, grade: "not-reproduced" });
    expect(silence?.message).toMatch(/still running.*not reproduced in 1 tries/);
  }, 30_000);

  it("says once that a client which never connects cannot be judged", async () => {
    const report = await runClient("exit 7");
    expect(report.blocked).toMatch(/never connected.*exited 7/);
    const verdicts = new Set(report.rules.flatMap((r) => r.checks.map((c) => c.verdict)));
    expect(verdicts).toEqual(new Set(["error"]));
    // It started: not connecting is the client's failure, not an unreachable target.
    expect(report.target.label).toBe("client");
    expect(clientUnstarted(report)).toBe(false);
    expect((await cli(["client", "--exec", "exit 7"])).code).toBe(1);
  }, 30_000);

  it("exits 3 for a client command that cannot be started, naming it once, and still writes the report", async () => {
    const dir = mkdtempSync(join(tmpdir(), "client-"));
    const command = "aicontrol-no-such-client --host {host} --port {port} --timeout {timeout} ping";
    const { code, out, err } = await cli(["client", "--exec", command, "--json", join(dir, "r.json")]);
    const report = readReport(join(dir, "r.json"));
    expect(report.blocked).toMatch(/could not be started: the shell exited 127 \(command not found\)/);
    expect(report.blocked).toContain(JSON.stringify(command));
    expect(clientUnstarted(report)).toBe(true);
    expect(report.target).toMatchObject({ kind: "client", command, label: "unreachable" });
    // Said once on stderr, and once in the summary, not under every check.
    expect(err.split("\n").filter((l) => l.includes(command))).toEqual([`aicontrol-conformance: ${report.blocked}`]);
    expect(out.split("\n").filter((l) => l.includes(command))).toEqual([`No check could be judged: ${report.blocked}`]);
    expect(report.rules).toHaveLength(contract.rules.length);
    for (const rule of report.rules) {
      if (!rule.checks.length) {
        expect(rule.verdict, rule.id).toBe("skip");
        continue;
      }
      expect(rule.verdict, rule.id).toBe("error");
      for (const check of rule.checks) expect(check.message, check.id).toBe(report.blocked);
    }
    expect(code).toBe(3);
  }, 30_000);

  it("starts no client after an interruption, and skips what did not finish", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 1500);
    const started = Date.now();
    const report = await runClientSuite(`${CLIENT} ping`, { runs: 100, signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(6000);
    const checks = report.rules.flatMap((r) => r.checks);
    expect(checks.filter((c) => c.verdict === "fail" || c.verdict === "error")).toEqual([]);
    expect(checks.some((c) => c.verdict === "skip" && /interrupted/.test(c.message))).toBe(true);
  }, 30_000);

  it("reports the client's exit on usage errors of client mode", async () => {
    const { code, err } = await cli(["client"]);
    expect(code).toBe(2);
    expect(err).toMatch(/--exec/);
  });
});

describe("client mode against a client in plain Python", () => {
  it.skipIf(!hasPython)(
    "passes every rule a client is bound by",
    async () => {
      const report = await runClient(PYTHON_CLIENT);
      expect(problems(report)).toEqual([]);
      expect(report.summary.warn).toBe(0);
      for (const rule of report.rules) {
        if (rule.reason === BRIDGE_DUTY) continue;
        // A skip says what kind of reason it gives, as a fact reporters read.
        for (const check of rule.checks) if (check.verdict === "skip") expect(check.reasonKind, check.id).toBeDefined();
        if (rule.id.endsWith(".method.events")) {
          expect(checksOf(rule)).toEqual([FOLLOW_SKIPS_PING]);
          continue;
        }
        // It takes no token, so re-authorization after a reconnect is not observed: that check alone skips.
        if (rule.id.endsWith(".validation.security")) {
          expect(rule.checks.map((c) => [c.id, c.verdict, c.message])).toEqual([
            [
              "validation.security/reauth-after-reconnect",
              "skip",
              "the client sent no auth request with a token in FONLINE_AI_TOKEN",
            ],
          ]);
          continue;
        }
        // Rules a client is bound by but no case observes are skipped with their reason; the rest pass.
        expect(rule.verdict, rule.id).toBe(rule.checks.length ? "pass" : "skip");
        for (const check of rule.checks) expect(check.verdict, check.id).toBe("pass");
      }
      const ran = report.rules.flatMap((r) => r.checks.map((c) => c.id));
      expect(new Set(ran)).toEqual(new Set(clientChecks.map((c) => c.id)));
    },
    120_000,
  );
});

it("every client check is proven able to fail by a mutant client", () => {
  const proven = new Set(clientMutants.map((m) => m.check));
  expect(clientChecks.map((c) => c.id).filter((id) => !proven.has(id))).toEqual([]);
  for (const m of clientMutants) expect(clientChecks.find((c) => c.id === m.check)?.rules).toContain(m.breaks);
  expect(new Set(clientMutants.map((m) => m.name)).size).toBe(clientMutants.length);
});

// One mutant at a time: a client's reads are cut as the machine schedules it, and mutants beside one another on
// two cores let a reply cut inside a character reach a client whole.
describe.each(clientMutants.map((m) => [m.name, m] as const))("client mutant %s", (_name, mutant) => {
  it(`${mutant.verdict}s ${mutant.check} on ${mutant.breaks} (${mutant.description})`, async () => {
    const report = await runClient(`${CLIENT} --mutant ${mutant.name} ${mutant.asks ?? "ping"}`, [mutant.check]);
    expect(verdictOf(report, mutant.breaks)).toBe(mutant.verdict);
    expect(checkVerdict(report, mutant.breaks, mutant.check)).toBe(mutant.verdict);
  }, 60_000);
});

describe("client mode with a token in the contract's variable", () => {
  it("answers each case's own request, not an auth, and shows the token in no report or log line", async () => {
    const token = "client-sent-secret-5e1f";
    const lines: string[] = [];
    const report = await runClientSuite(`${CLIENT} ping`, {
      env: { PATH: process.env.PATH, [contract.defaults.tokenEnv]: token },
      log: (line) => lines.push(line),
      reporters: [
        {
          name: "collect",
          onCheckEnd: (_info, check) => {
            lines.push(JSON.stringify(check));
          },
        },
      ],
    });
    // A case answering one request answered the client's auth as that request, and the client refused it.
    expect(problems(report)).toEqual([]);
    expect(JSON.stringify(report)).not.toContain(token);
    expect(lines.join("\n")).not.toContain(token);
  }, 120_000);
});
