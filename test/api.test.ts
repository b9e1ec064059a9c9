import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConformanceError, ReferenceBridge, runConformance } from "../index.js";
import { contract } from "../protocol/contract.js";
import { assertValidReport, TEST_TOKEN } from "./helpers.js";

describe("runConformance, the programmatic API", () => {
  it("gates a bridge inside its own test suite and returns the JSON report object", async () => {
    const bridge = new ReferenceBridge({ token: TEST_TOKEN });
    const { port } = await bridge.listen();
    try {
      const report = await runConformance({
        endpoint: `127.0.0.1:${port}`,
        tokenEnv: "BRIDGE_TOKEN",
        env: { BRIDGE_TOKEN: TEST_TOKEN },
        profile: "quick",
        rules: ["wire.*", "method.ping"],
      });
      assertValidReport(report);
      expect(report.summary.fail).toBe(0);
      expect(report.rules.find((r) => r.id.endsWith("wire.utf8"))!.verdict).toBe("pass");
    } finally {
      await bridge.close();
    }
  });

  it("throws ConformanceError for bad options, and reports an unreachable bridge as error", async () => {
    await expect(runConformance({ endpoint: "192.0.2.1:43011" })).rejects.toThrow(ConformanceError);
    await expect(runConformance({ timeout: -1 })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/timeout must be a positive time/),
    });
    const report = await runConformance({ endpoint: "127.0.0.1:1", profile: "quick", env: {} });
    expect(report.summary.error).toBeGreaterThan(0);
  });
});

describe("the packed package", () => {
  it("installs from its tarball and runs both the CLI and the API", () => {
    const root = process.cwd();
    const work = mkdtempSync(join(tmpdir(), "aicc-pack-"));
    // dist/ is built once by the global setup; prepack would rebuild it under the tests running beside.
    const tarball = execFileSync("npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", work], {
      cwd: root,
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .at(-1)!;
    const listing = execFileSync("tar", ["-tzf", join(work, tarball)], { encoding: "utf8" });
    expect(listing).toContain("package/dist/index.js");
    expect(listing).toContain("package/dist/bin.js");
    expect(listing).toContain("package/dist/reports/report.schema.json");
    expect(listing).toContain("package/dist/protocol/AiControlProtocol.json");
    expect(listing).toContain("package/dist/protocol/overlay.yaml");
    expect(listing).not.toContain("package/test/");

    const project = join(work, "consumer");
    execFileSync("mkdir", ["-p", project]);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module" }),
    );
    execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", join(work, tarball)], {
      cwd: project,
      stdio: "pipe",
    });

    const json = join(project, "cli.json");
    execFileSync(
      join(project, "node_modules", ".bin", "aicontrol-conformance"),
      ["--profile", "quick", "--rules", "method.ping,wire.ndjson", "--json", json],
      { cwd: project, stdio: "pipe" },
    );
    expect(existsSync(json)).toBe(true);
    assertValidReport(JSON.parse(readFileSync(json, "utf8")));
    expect(listing).toContain("package/dist/protocol/contract.compiled.json");

    // A failure's printed replay command works as printed in the installed package.
    const mutant = `node ${join(project, "node_modules", "aicontrol-conformance", "dist", "bridges", "reference", "cli.js")} --mutant lenient-json`;
    const failing = join(project, "failing.json");
    try {
      execFileSync(
        join(project, "node_modules", ".bin", "aicontrol-conformance"),
        ["--spawn", mutant, "--profile", "quick", "--rules", "error.parse", "--recheck", "0", "--json", failing],
        { cwd: project, stdio: "pipe", env: { ...process.env, npm_lifecycle_event: "" } },
      );
    } catch (err) {
      expect((err as { status: number }).status).toBe(1);
    }
    const printed = assertValidReport(JSON.parse(readFileSync(failing, "utf8")))
      .rules.flatMap((r) => r.checks)
      .find((c) => c.verdict === "fail" && c.replay)!.replay!;
    expect(printed).toMatch(/^npx aicontrol-conformance /);
    const replayed = (() => {
      try {
        return execFileSync("sh", ["-c", printed], { cwd: project, encoding: "utf8", stdio: "pipe" });
      } catch (err) {
        return String((err as { stdout: string }).stdout);
      }
    })();
    expect(replayed).toMatch(/STILL FAILING/);

    writeFileSync(
      join(project, "gate.mjs"),
      [
        `import { runConformance, ReferenceBridge } from "aicontrol-conformance";`,
        `import { createRequire } from "node:module";`,
        `const schema = createRequire(import.meta.url)("aicontrol-conformance/report.schema.json");`,
        `const bridge = new ReferenceBridge();`,
        `const { port } = await bridge.listen();`,
        `const report = await runConformance({ endpoint: "127.0.0.1:" + port, profile: "quick", rules: ["method.*"] });`,
        `await bridge.close();`,
        `console.log(JSON.stringify({ fail: report.summary.fail, rules: report.rules.length, schema: schema.title }));`,
      ].join("\n"),
    );
    const out = JSON.parse(execFileSync("node", ["gate.mjs"], { cwd: project, encoding: "utf8" }).trim()) as {
      fail: number;
      rules: number;
      schema: string;
    };
    expect(out).toEqual({ fail: 0, rules: contract.rules.length, schema: expect.stringContaining("schemaVersion 1") });
  });
});
