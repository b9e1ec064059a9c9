import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { readReport, TEST_TOKEN } from "./helpers.js";

// No GitHub runner is reachable from here: the action's own steps (its `run:` scripts) run with
// bash in the environment a runner gives them: GITHUB_* files in a temporary workspace, the
// inputs as the runner substitutes them. Its `uses:` steps (setup-node, upload-artifact) are
// GitHub's; the test checks what they are given.

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  shell?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
  "working-directory"?: string;
}
interface Action {
  inputs: Record<string, { default?: string }>;
  runs: { using: string; steps: Step[] };
}

const root = process.cwd();
const action = parse(readFileSync(join(root, "action.yml"), "utf8")) as Action;
const work = mkdtempSync(join(tmpdir(), "aicc-action-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** What the runner makes of a `${{ }}` expression: only the contexts the action's run steps use. */
function expand(text: string, inputs: Record<string, string>): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    const input = /^inputs\.([\w-]+)$/.exec(expr);
    if (input) return inputs[input[1]!] ?? "";
    if (expr === "github.action_path") return root;
    throw new Error(`the test runner does not evaluate \${{ ${expr} }}`);
  });
}

interface JobRun {
  workspace: string;
  summary: string;
  outputs: string;
  stdout: string;
  stderr: string;
  status: number | null;
  uploaded: Record<string, string>;
}

/** Runs the action as a job step would, with `with:` values given; stops at the first failing step as a runner does. */
function runAction(given: Record<string, string>, name: string): JobRun {
  const workspace = join(work, name);
  mkdirSync(workspace);
  const files = { summary: join(work, `${name}-summary.md`), outputs: join(work, `${name}-output.txt`) };
  for (const f of Object.values(files)) writeFileSync(f, "");
  const inputs = Object.fromEntries(Object.entries(action.inputs).map(([k, v]) => [k, given[k] ?? v.default ?? ""]));
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_WORKSPACE: workspace,
    GITHUB_STEP_SUMMARY: files.summary,
    GITHUB_OUTPUT: files.outputs,
    GITHUB_ACTION_PATH: root,
    BRIDGE_TOKEN: TEST_TOKEN,
  };
  let stdout = "";
  let stderr = "";
  let status: number | null = 0;
  let uploaded: Record<string, string> = {};
  for (const step of action.runs.steps) {
    if (step.uses) {
      if (step.uses.startsWith("actions/upload-artifact@"))
        uploaded = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, expand(v, inputs)]));
      continue;
    }
    if (status !== 0 && !step.if?.includes("always()")) continue;
    expect(step.shell).toBe("bash");
    const dir = expand(step["working-directory"] ?? ".", inputs);
    const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(v, inputs)]));
    const result = spawnSync("bash", ["-e", "-c", expand(step.run!, inputs)], {
      cwd: isAbsolute(dir) ? dir : join(workspace, dir),
      env: { ...env, ...stepEnv },
      encoding: "utf8",
      timeout: 60_000,
    });
    stdout += result.stdout;
    stderr += result.stderr;
    if (result.status !== 0) status = result.status;
  }
  return {
    workspace,
    summary: readFileSync(files.summary, "utf8"),
    outputs: readFileSync(files.outputs, "utf8"),
    stdout,
    stderr,
    status,
    uploaded,
  };
}

const bridge = (mutant?: string) =>
  `node ${join(root, "dist/bridges/reference/cli.js")} --token-env BRIDGE_TOKEN${mutant ? ` --mutant ${mutant}` : ""}`;

describe("the GitHub Action", () => {
  it("is a composite action whose inputs reach its run step through the environment only", () => {
    expect(action.runs.using).toBe("composite");
    for (const input of ["spawn", "endpoint", "profile", "token-env", "args", "reports"])
      expect(action.inputs).toHaveProperty(input);
    for (const step of action.runs.steps) expect(step.run ?? "").not.toMatch(/\$\{\{\s*inputs\./);
  });

  it("passes a conformant bridge: a job summary, the reports where it says, the artifact of them, exit code 0", () => {
    const job = runAction(
      {
        spawn: bridge(),
        profile: "quick",
        "token-env": "BRIDGE_TOKEN",
        args: `--rules 'wire.*,method.ping' --seed 7`,
        reports: "out/conformance",
      },
      "pass",
    );
    expect(job.status, job.stderr).toBe(0);
    const reports = join(job.workspace, "out/conformance");
    expect(readdirSync(reports).sort()).toEqual(["junit.xml", "report.html", "report.json", "summary.md"]);
    const report = readReport(join(reports, "report.json"));
    expect(report.seed).toBe(7);
    expect(report.rules.filter((r) => r.verdict !== "skip").every((r) => /\.(wire\.|method\.ping)/.test(r.id))).toBe(
      true,
    );
    expect(job.summary).toContain(readFileSync(join(reports, "summary.md"), "utf8").trim().split("\n")[0]!);
    expect(job.outputs).toContain("exit-code=0\n");
    expect(job.outputs).toContain("report=out/conformance/report.json\n");
    expect(job.uploaded).toMatchObject({ name: "conformance-reports", path: "./out/conformance" });
    expect(job.stdout).not.toContain("::error");
  });

  it("fails the job on a failing rule, with its annotation, and still writes the summary and the reports", () => {
    const job = runAction(
      { spawn: bridge("ping-not-ok"), profile: "quick", "token-env": "BRIDGE_TOKEN", args: "--rules method.ping" },
      "fail",
    );
    expect(job.status).toBe(1);
    expect(job.stdout).toMatch(/^::error title=ai-control-protocol\.method\.ping::/m);
    expect(job.summary).toMatch(/method\.ping/);
    expect(existsSync(join(job.workspace, "conformance-reports/report.json"))).toBe(true);
    expect(job.outputs).toContain("exit-code=1\n");
  });

  it("merges the reports of the jobs of a matrix, named by a glob, into one report and one summary", () => {
    for (const part of [1, 2]) {
      const job = runAction(
        {
          spawn: bridge(),
          profile: "quick",
          "token-env": "BRIDGE_TOKEN",
          args: `--rules wire.* --seed 11 --shard ${part}/2`,
          reports: "part",
        },
        `shard${part}`,
      );
      expect(job.status, job.stderr).toBe(0);
    }
    const job = runAction({ merge: `${join(work, "shard*", "part", "report.json")}\n`, reports: "merged" }, "merge");
    expect(job.status, job.stderr).toBe(0);
    const merged = readReport(join(job.workspace, "merged/report.json"));
    expect(merged.shard).toBeUndefined();
    const parts = [1, 2].map((p) => readReport(join(work, `shard${p}`, "part", "report.json")));
    const judged = (r: typeof merged) => r.rules.filter((x) => x.verdict !== "skip").map((x) => x.id);
    expect(judged(merged).sort()).toEqual([...new Set([...judged(parts[0]!), ...judged(parts[1]!)])].sort());
    expect(job.summary).not.toBe("");
  });

  it("is used in the README and docs/ci.md with inputs it has: a gate in one step, 8 fuzzing jobs and their merge", () => {
    const blocks = (file: string) =>
      [...readFileSync(join(root, file), "utf8").matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parse(m[1]!));
    const uses = (node: unknown): Step[] =>
      Array.isArray(node)
        ? node.flatMap(uses)
        : node && typeof node === "object"
          ? [
              ...((node as Step).uses?.includes("/aicontrol-conformance@") ? [node as Step] : []),
              ...Object.values(node).flatMap(uses),
            ]
          : [];
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const ci = readme.slice(readme.indexOf("## In CI"), readme.indexOf("\n## ", readme.indexOf("## In CI") + 1));
    expect([...ci.matchAll(/^\s*- uses: /gm)]).toHaveLength(1);
    const docs = blocks("docs/ci.md");
    const steps = [...uses(blocks("README.md")), ...uses(docs)];
    expect(steps.length).toBeGreaterThanOrEqual(4);
    for (const step of steps) for (const key of Object.keys(step.with ?? {})) expect(action.inputs).toHaveProperty(key);
    const fuzz = docs.find((d) => d?.jobs?.merge) as {
      jobs: Record<string, { needs?: string; strategy?: { matrix: { part: number[] } } }>;
    };
    expect(fuzz.jobs.part!.strategy!.matrix.part).toHaveLength(8);
    expect(fuzz.jobs.merge!.needs).toBe("part");
    expect(uses(fuzz.jobs.merge).map((s) => s.with?.merge)).toEqual(["parts/*/report.json"]);
  });

  it("refuses spawn and endpoint together, in words", () => {
    const job = runAction({ spawn: bridge(), endpoint: "127.0.0.1:1" }, "both");
    expect(job.status).toBe(2);
    expect(job.stdout).toContain("::error title=AiControl conformance::give the action spawn or endpoint, not both");
  });
});
