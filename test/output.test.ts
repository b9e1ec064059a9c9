import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { consoleReporter } from "../reports/console.js";
import { targetNotes } from "../reports/output.js";
import type { Report } from "../reports/types.js";
import { fileProblem } from "../runner/files.js";
import { cli, readReport, TEST_TOKEN } from "./helpers.js";

// The text a user reads after a finding: short where nothing more is to be read, and in words.

const dir = mkdtempSync(join(tmpdir(), "aicc-output-"));
const env = { ...process.env, FONLINE_AI_TOKEN: TEST_TOKEN };
const mutant = (name: string) => `node dist/bridges/reference/cli.js --mutant ${name}`;

/** A report of a bridge that accepts non-standard JSON, its failure rechecked 3 of 3 (consistent). */
async function failingReport(name: string): Promise<string> {
  const json = join(dir, `${name}.json`);
  const r = await cli(
    ["--spawn", mutant("lenient-json"), "--rules", "error.parse,method.ping", "--profile", "quick", "--json", json],
    env,
  );
  expect(r.code, r.err).toBe(1);
  return json;
}

describe("a replay", () => {
  it("prints its verdict per case first, the detail only of what failed, and no rule table", async () => {
    const json = await failingReport("replayed");
    const failing = readReport(json)
      .rules.flatMap((r) => r.checks)
      .filter((c) => c.verdict === "fail");
    expect(failing[0]!.reproduced?.grade).toBe("consistent");
    const r = await cli(["--replay", json], env);
    expect(r.code).toBe(1);
    const lines = r.out.split("\n");
    // The first lines: one verdict per replayed case.
    const ids = [...new Set(failing.map((c) => c.id))];
    expect(lines.slice(0, ids.length).sort()).toEqual(ids.map((id) => `STILL FAILING ${id}`).sort());
    expect(r.out).toMatch(/\n {4}before: .*\n {4}now: /);
    expect(r.out).not.toMatch(/^(wire|error|method)$/m);
    expect(r.out).not.toContain("Failed rules");
    expect(r.out).not.toContain("rule(s) not selected");
    // A fault reproduced every time is not hedged as one that strikes only some runs.
    expect(r.out).not.toMatch(/try \d+ of \d+/);
    expect(r.out).toMatch(/^\d+ rules: 0 pass, \d+ fail/m);
  });

  it("of one case (--check --seed --path) prints its verdict as its first line, and only that where it is fixed", async () => {
    const json = await failingReport("one");
    const check = readReport(json)
      .rules.flatMap((r) => r.checks)
      .find((c) => c.verdict === "fail" && c.id === "error.parse/non-json")!;
    const args = ["--check", check.id, "--seed", String(check.seed), "--path", check.path!, "--runs", "15"];
    const still = await cli(["--spawn", mutant("lenient-json"), ...args], env);
    expect(still.out.split("\n")[0]).toBe(`STILL FAILING ${check.id}`);
    const fixed = await cli(["--spawn", "node dist/bridges/reference/cli.js", ...args], env);
    expect(fixed.code).toBe(0);
    expect(fixed.out.trim().split("\n")).toEqual([
      `FIXED ${check.id}`,
      "",
      expect.stringMatching(/^\d+ rules: 1 pass/),
    ]);
  });
});

describe("a spawned bridge's stderr", () => {
  it("is shown once, with the count of deaths that left the same lines", () => {
    const stderr = 'Traceback (most recent call last):\n  File "bridge.py", line 9\nRecursionError';
    const report = {
      rules: [],
      targetExits: [
        { check: "a/1", exit: "code 1", stderr },
        { check: "b/2", exit: "code 1", stderr },
        { check: "a/1", exit: "code 1", stderr },
        { check: "c/3", exit: "signal SIGSEGV", stderr: "" },
      ],
    } as unknown as Report;
    const notes = targetNotes(report);
    expect(notes).toEqual([
      `The spawned bridge exited (code 1) 3 times during a/1, b/2; its last stderr lines (the same each time): ${stderr}`,
      "The spawned bridge exited (signal SIGSEGV) during c/3",
    ]);
    expect(notes.join("\n").match(/Traceback/g)).toHaveLength(1);
  });
});

describe("--compare", () => {
  it("leaves out the rules one report did not run, counted, and says when the targets differ", async () => {
    const lastFailed = join(dir, "last-failed.json");
    const full = join(dir, "full.json");
    const base = [
      ...["--profile", "quick", "--recheck", "0"],
      ...["--rules", "error.parse,method.ping,wire.request-envelope,wire.response-envelope,wire.tcp-stream"],
    ];
    expect((await cli(["--spawn", mutant("lenient-json"), ...base, "--json", full], env)).code).toBe(1);
    expect((await cli(["--last-failed", full, "--json", lastFailed], env)).code).toBe(1);
    const r = await cli(["--compare", full, lastFailed], env);
    expect(r.out).not.toMatch(/-> skip/);
    // Either way round: judged in the full run and not run by --last-failed, or the other way.
    const skipped = readReport(lastFailed).rules.filter((x) => {
      const was = readReport(full).rules.find((y) => y.id === x.id)!.verdict;
      return was !== x.verdict && (x.verdict === "skip" || was === "skip");
    }).length;
    expect(skipped).toBeGreaterThanOrEqual(3);
    expect(r.out).toContain(`Note: ${skipped} rules judged in one report and not run in the other (skip) left out.`);
    expect(r.out).not.toContain("different targets");

    const other = join(dir, "other.json");
    expect((await cli(["--spawn", "node dist/bridges/reference/cli.js", ...base, "--json", other], env)).code).toBe(0);
    const two = await cli(["--compare", full, other], env);
    expect(two.out).toContain(
      `Note: the reports are of different targets: ${full} of bridge ${mutant("lenient-json")}, ${other} of bridge node dist/bridges/reference/cli.js.`,
    );
  });
});

describe("errors", () => {
  it("say what is wrong with a file in words, with its path", async () => {
    const missing = join(dir, "nope.json");
    const r = await cli(["--replay", missing]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`cannot read --replay ${missing}: no such file or directory`);
    const baseline = await cli(["--baseline", missing]);
    expect(baseline.err).toContain(`cannot read --baseline ${missing}: no such file or directory`);
    // As root every file is writable: the refusal itself is made up.
    const refused = Object.assign(new Error(`EACCES: permission denied, open '${missing}'`), { code: "EACCES" });
    expect(fileProblem(refused)).toBe("permission denied");
    const unknown = Object.assign(new Error("EXDEV: cross-device link not permitted, rename 'a' -> 'b'"), {
      code: "EXDEV",
    });
    expect(fileProblem(unknown)).toBe("cross-device link not permitted");
    const blocked = join(dir, "a-file");
    writeFileSync(blocked, "");
    const html = await cli(["--html", join(blocked, "r.html")]);
    expect(html.err).toContain(
      `cannot write the html report to ${join(blocked, "r.html")}: a part of its path is not a directory`,
    );
  });

  it("take a negative value for what it is, and say so in the tool's words", async () => {
    const r = await cli(["--duration", "-5s"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      'aicontrol-conformance: --duration must be a positive time such as 500ms, 2s, 10m or 1h, not "-5s"\nRun with --help for usage.\n',
    );
    const seed = await cli(["--seed", "-3", "--check", "method.ping/ok", "--profile", "quick", "--json", "-"]);
    expect(seed.code, seed.err).toBe(0);
    expect(JSON.parse(seed.out).seed).toBe(-3);
    const missing = await cli(["--spawn", "--endpoint", "127.0.0.1:1"]);
    expect(missing.err).toContain("--spawn needs a value (one that starts with a dash is given as --spawn=VALUE)");
  });
});

describe("a terminal of zero or unknown width", () => {
  it("is taken as 80 columns: a long note wraps at 80, not one character per line", () => {
    for (const columns of [0, undefined]) {
      let text = "";
      const reporter = consoleReporter({ write: (t) => (text += t), tty: true, live: false, columns, env: {} });
      const message = "word ".repeat(60).trim();
      reporter.onCheckEnd?.({ id: "x/y" } as never, { verdict: "fail", message, durationMs: 1 } as never);
      const lines = stripVTControlCharacters(text).trimEnd().split("\n");
      expect(lines.length).toBeGreaterThan(1);
      expect(lines.length).toBeLessThan(6);
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    }
  });
});
